# Set-up and entry points. `make demo` and `make test` create .venv and install everything on first use.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench conformance conformance-mlir clean bytecode graphviz

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q -e '.[dev,mlir]'
	touch $(STAMP)

# Bytecode written ahead: where PYTHONDONTWRITEBYTECODE is set, every process would otherwise compile every
# tsjit module it imports (about a second of a first call). Only changed sources are compiled again.
bytecode: $(STAMP)
	$(PY) -m compileall -q tsjit bench

demo: bytecode
	$(PY) examples/demo.py

# Graphviz's `dot` draws graphs (`tsjit svg`, `tsjit diff`): installed from Debian's package where it is missing and
# we are root; elsewhere a message, never a failure (the tests that need it skip). Chromium, which the screenshot
# test uses where present, is too large to install here.
graphviz:
	@command -v dot >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Graphviz for graph pictures: apt-get install -y graphviz"; \
	    { apt-get install -y -q graphviz >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && \
	      apt-get install -y -q graphviz >/dev/null 2>&1; }; } || \
	      echo "could not install Graphviz: graph pictures are unavailable and their tests skip"; \
	  else \
	    echo "Graphviz's dot is missing (apt-get install graphviz): graph pictures are unavailable, their tests skip"; \
	  fi; }

# pytest-xdist runs the suite on every core, a test file per worker at a time (--dist loadfile keeps a file's
# tests, and the module-level state they build, in one process); TEST_JOBS=0 runs it in this process
TEST_JOBS ?= auto
test: bytecode lint graphviz
	TSJIT_LINT=1 $(PY) -m pytest -q -p no:cacheprovider -n $(TEST_JOBS) --dist loadfile --durations=15 tests

lint: $(STAMP)
	$(VENV)/bin/ruff check tsjit tests examples bench
	$(VENV)/bin/mypy tsjit/ir tsjit/passes

# PyTorch's whole op database through tsjit and torch.jit (`make test` runs a fixed sample of it)
conformance: bytecode
	$(PY) tests/conformance/opdb_runner.py --quiet

# op_db's functions, torch.nn's modules and the e2e corpus through tsjit and torch-mlir's FX route to linalg, TOSA and
# StableHLO on IREE, side by side (`make test` runs a fixed sample of it)
conformance-mlir: bytecode
	$(PY) tests/conformance/mlir_runner.py --quiet

bench: bytecode
	$(PY) -m bench

clean:
	rm -rf $(VENV) build *.egg-info
