# provrag — the two commands a newcomer needs: `make run` and `make test`.
PY      ?= python3.11
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
TSTAMP  := $(VENV)/.installed-test
SHELL   := /bin/bash
Q       ?= What does provrag record for every text unit?

.PHONY: run test install index ask verify clean

$(BIN)/python:
	@command -v $(PY) >/dev/null 2>&1 || { echo "needs $(PY) on PATH (or: make PY=python3 ...)"; exit 2; }
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e .
	@touch $@

$(TSTAMP): $(STAMP)
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

install: $(STAMP)

## make run: install, index data/ into output/, print the summary
run: $(STAMP)
	$(BIN)/provrag index data --out output

index: run

## make test: install what the tests need and run pytest
test: $(TSTAMP)
	$(BIN)/python -m pytest -q

clean:
	rm -rf output .pytest_cache
