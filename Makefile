# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Locked versions (with hashes) of every runtime and dev dependency; `make lock` refreshes them.
LOCK := requirements/dev.txt
PIP_COMPILE := CUSTOM_COMPILE_COMMAND="make lock" $(BIN)/pip-compile --quiet --generate-hashes \
	--allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links --no-emit-trusted-host

.PHONY: run test lint typecheck unit chromium bench clean messages lock lock-upgrade

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The locked versions, then the project itself without touching them.
$(STAMP): pyproject.toml $(LOCK) | $(BIN)/python
	$(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK)
	$(BIN)/python scripts/check-lock.py
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

## lock: pin pyproject.toml's dependencies into requirements/{dev,runtime}.txt, keeping existing pins
lock: | $(BIN)/python
	test -x $(BIN)/pip-compile || $(BIN)/python -m pip install --quiet --require-hashes -r $(LOCK)
	$(PIP_COMPILE) $(LOCK_FLAGS) --extra dev --output-file requirements/dev.txt pyproject.toml
	$(PIP_COMPILE) -c requirements/dev.txt --output-file requirements/runtime.txt pyproject.toml
	$(PIP_COMPILE) $(LOCK_FLAGS) --output-file $(CODEGEN_LOCK) requirements/codegen.in
	$(BIN)/python scripts/check-lock.py

## lock-upgrade: the same, moving every pin to the newest version pyproject.toml allows
lock-upgrade:
	$(MAKE) lock LOCK_FLAGS=--upgrade

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

# One test process per core (pytest-xdist; JOBS=1: one process). worksteal hands a waiting process
# tests queued for another, so that the long state-machine tests do not end the run alone.
JOBS ?= $(shell nproc)
unit: $(STAMP) chromium
	$(BIN)/python -m pytest -q -n $(JOBS) --dist worksteal --durations=25

## chromium: install Debian's Chromium for the browser tests when it is missing (quick when present)
chromium:
	bash scripts/ensure-chromium.sh

## messages: refresh the catalogs' template and every .po from the sources (then translate what is new)
I18N := src/sedma_elo/i18n
messages: $(STAMP)
	$(BIN)/pybabel extract -F babel.cfg -k _say:2 -k N_ -k Np_:1,2 --add-comments=Translators: --no-location --sort-output --width 110 \
		--project sedma-elo --copyright-holder "sedma-elo contributors" -o $(I18N)/messages.pot .
	for lang in de it es sk zh; do \
		$(BIN)/pybabel update -i $(I18N)/messages.pot -d $(I18N)/locales -l $$lang --no-fuzzy-matching --ignore-obsolete --width 110; \
	done

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

## codegen: the OpenAPI client generator, locked, in its own venv (requirements/codegen.in says why)
CODEGEN := $(VENV)/codegen
CODEGEN_LOCK := requirements/codegen.txt
.PHONY: codegen client
codegen: $(CODEGEN)/.installed
$(CODEGEN)/.installed: $(CODEGEN_LOCK) | $(BIN)/python
	$(PYTHON) -m venv $(CODEGEN)
	$(CODEGEN)/bin/python -m pip install --quiet --require-hashes -r $(CODEGEN_LOCK)
	touch $@
unit: codegen

## client: generate a typed Python client of the API from its OpenAPI schema (into CLIENT, default ./client)
client: $(STAMP) codegen
	$(BIN)/python scripts/generate-client.py $(or $(CLIENT),client)
