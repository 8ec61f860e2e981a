# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck unit chromium bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

## run: set up and run the main job on the bundled sample
run: $(STAMP)
	$(BIN)/sedma-elo demo
	$(BIN)/sedma-elo serve --demo

## test: set up and run lint, type check and the whole test suite
test: $(STAMP) lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) chromium
	$(BIN)/python -m pytest -q

## chromium: install Debian's Chromium for the browser tests when it is missing (quick when present)
chromium:
	bash scripts/ensure-chromium.sh

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

## mono: install Debian's Mono (mcs + runtime) for the C# oracle tests when missing (quick when present)
.PHONY: mono golden
mono:
	bash scripts/ensure-mono.sh
unit: mono

## golden: regenerate tests/golden/ from the seed post's C# method compiled with Mono
golden: $(STAMP) mono
	$(BIN)/python scripts/make_golden.py

## mutation: mutation testing (mutmut) of the rating core, kernel, exactly-once path, round result and split
.PHONY: mutation
mutation: $(STAMP) mono
	$(BIN)/python scripts/mutation.py
