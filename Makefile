# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck unit chromium bench clean messages

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

## messages: refresh the catalogs' template and every .po from the sources (then translate what is new)
I18N := src/sedma_elo/i18n
messages: $(STAMP)
	$(BIN)/pybabel extract -F babel.cfg -k _say:2 -k N_ -k Np_:1,2 --add-comments=Translators: --no-location --sort-output \
		--project sedma-elo --copyright-holder "sedma-elo contributors" -o $(I18N)/messages.pot .
	for lang in de it es sk zh; do \
		$(BIN)/pybabel update -i $(I18N)/messages.pot -d $(I18N)/locales -l $$lang --no-fuzzy-matching --ignore-obsolete; \
	done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
