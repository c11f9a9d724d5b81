# Magnetar developer commands. Needs only python3 (3.11+) and access to a package index.
#   make run       - start the service locally (PORT=8080 by default)
#   make stop      - stop the services `make run` started here
#   make test      - static checks + the whole test suite (what .ci/run runs)
#   make test-fast - the tests that start no stack and no JVM and do not fuzz (unit, in-memory services), < 1 min
#   make lint      - ruff only
#   make glue-artifacts - the Spark jobs' scripts and libraries zip in build/glue/
#   make docs      - the documentation site (mkdocs.yml) in site/

PORT ?= 8080
VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(shell command -v python3.11 2>/dev/null || command -v python3)
# pytest-xdist: tests spread over WORKERS processes, each with its own embedded stack and
# (once it runs a Spark test) its own local SparkSession; see tests/conftest.py (how the
# files are dealt to the workers). 4 on 2 cores (measured: 409 s with 4, 448 s with 2;
# later 326 s with 4, 387 s with 5, then 311 s with 4 and 313 s with 3: the run keeps both
# cores 100 % busy, so only less CPU work makes it faster).
WORKERS ?= 4
# test-fast: 3 on 2 cores (measured: 58 s with 2, 47 s with 3): some of its tests wait on
# real time (backoffs, long polls) with a core free.
FAST_WORKERS ?= 3
PYTEST := $(BIN)/pytest -q --dist worksteal

# Python's bytecode caches (__pycache__, and pytest's rewritten test and plugin modules) are
# written, whatever the calling shell says: with PYTHONDONTWRITEBYTECODE set (as on some CI
# and sandbox machines) every xdist worker and every subprocess of the tests compiled the
# project, hypothesis and schemathesis from source again (measured: collecting the suite
# took 21 CPU-s per worker instead of 10.5).
unexport PYTHONDONTWRITEBYTECODE
FAST := not emulator and not spark and not slow and not fuzz

.PHONY: chromium install run stop test test-fast check lint clean glue-artifacts docs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall only when a pyproject.toml changed (the stamp is older than it). Two editable
# distributions: magnetar-client (sdk/: the SDK and magnetar_wire) and magnetar-server (the
# root). The uninstall drops the single `magnetar` distribution of older checkouts, which
# would otherwise take the `magnetar` command with it when pip replaces it.
# The client is installed in setuptools' `compat` editable mode: its folder is a plain path
# entry, so a folder named `magnetar` beside a script (this clone, say) cannot shadow the
# package as a namespace package (the default mode's import hook runs after such folders).
$(VENV)/.installed: pyproject.toml sdk/pyproject.toml | $(BIN)/python
	@echo "make install: installing Magnetar and its pinned dependencies into $(VENV) (1-3 minutes on a fresh machine; once)"
	$(BIN)/python -m pip uninstall --quiet --yes magnetar 2>/dev/null
	$(BIN)/python -m pip install --progress-bar off --no-color -e ./sdk --config-settings editable_mode=compat
	$(BIN)/python -m pip install --progress-bar off --no-color -e '.[dev]'
	touch $@

# Spark's class data sharing archive (magnetar_local.spark_jvm): Spark JVMs of the tests and
# the local jobs start in half the CPU. Built once per virtualenv (about 20 s); without Java
# it is skipped and Spark runs without it.
$(VENV)/.spark-cds: $(VENV)/.installed
	@echo "make install: building Spark's class data sharing archive (20-100 s, once; Spark then starts in half the CPU)"
	$(BIN)/python -m magnetar_local.spark_jvm >/dev/null || echo "no Spark CDS archive: Spark starts slower"
	touch $@

# The console's browser test (tests/e2e/test_console_browser.py) drives Debian's Chromium
# through Playwright (never `playwright install`: it downloads browsers). Only `make test`
# needs it (never `make run`): installed with apt-get when missing, as root or with
# passwordless sudo, saying so; otherwise a message says how (and that test is skipped).
CHROMIUM := /usr/bin/chromium
chromium:
	@test -x $(CHROMIUM) || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; \
	  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; \
	  else echo "make test: $(CHROMIUM) is missing and installing it needs root: run 'apt-get install chromium' as root (the console's browser test is skipped without it, and fails under CI=true)"; exit 0; fi; \
	  echo "make test: installing Debian's chromium (apt-get) for the console's browser test"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null \
	    || echo "make test: apt-get could not install chromium (the console's browser test is skipped)"; }

install: $(VENV)/.installed $(VENV)/.spark-cds

run: install
	$(BIN)/magnetar local --port $(PORT)

stop:
	@$(BIN)/magnetar stop

# Static checks, before any test runs: lint, types, architecture contracts (.importlinter).
check: install
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports --no-logo
	$(MAKE) --no-print-directory docs

# The documentation site; strict (mkdocs.yml): a broken link or anchor fails the build.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# On a fresh checkout no module is compiled yet: one collection first writes every bytecode
# cache (pytest's rewritten test modules and plugins too), instead of each of the WORKERS
# compiling all of it at once (measured on a fresh clone: 21 CPU-s a worker, 4.3 with caches).
test: check chromium
	@test -d tests/unit/__pycache__ || $(BIN)/pytest -q --collect-only -p no:cacheprovider >/dev/null
	$(PYTEST) -n $(WORKERS)

# -p no:schemathesis: only the fuzz lane uses its pytest plugin (loading it: 1.4 CPU-s a process).
test-fast: install
	$(PYTEST) -n $(FAST_WORKERS) -p no:schemathesis -m "$(FAST)"

lint: install
	$(BIN)/ruff check .

glue-artifacts: install
	$(BIN)/python spark_glue/package.py build/glue
	@echo "upload: aws s3 sync build/glue/spark_glue s3://<ArtifactsBucket>/spark_glue/"

clean:
	rm -rf $(VENV) build/glue site
