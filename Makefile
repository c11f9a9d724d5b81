# Magnetar developer commands. Needs only python3 (3.11+) and access to a package index.
#   make run       - start the service locally (PORT=8080 by default)
#   make test      - static checks + the whole test suite (what .ci/run runs)
#   make test-fast - the tests that start no stack and no JVM (unit, in-memory services), < 1 min
#   make lint      - ruff only
#   make glue-artifacts - the Spark jobs' scripts and libraries zip in build/glue/

PORT ?= 8080
VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(shell command -v python3.11 2>/dev/null || command -v python3)
# pytest-xdist: tests spread over WORKERS processes, each with its own embedded stack and
# (once it runs a Spark test) its own local SparkSession; see tests/conftest.py.
WORKERS ?= 2
PYTEST := $(BIN)/pytest -q -n $(WORKERS) --dist load
FAST := not emulator and not spark and not slow

.PHONY: install run test test-fast check lint clean glue-artifacts

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall only when pyproject.toml changed (the stamp is older than it).
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

run: install
	$(BIN)/magnetar local --port $(PORT)

# Static checks, before any test runs (mypy and import-linter are added here).
check: install
	$(BIN)/ruff check .

test: check
	$(PYTEST)

test-fast: install
	$(PYTEST) -m "$(FAST)"

lint: install
	$(BIN)/ruff check .

glue-artifacts: install
	$(BIN)/python spark_glue/package.py build/glue
	@echo "upload: aws s3 sync build/glue/spark_glue s3://<ArtifactsBucket>/spark_glue/"

clean:
	rm -rf $(VENV) build/glue
