# Magnetar developer commands. Needs only python3 (3.11+) and access to a package index.
#   make run   - start the service locally (PORT=8080 by default)
#   make test  - lint + the whole test suite
#   make lint  - ruff only
#   make glue-artifacts - the Spark jobs' scripts and libraries zip in build/glue/

PORT ?= 8080
VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(shell command -v python3.11 2>/dev/null || command -v python3)

.PHONY: install run test lint clean glue-artifacts

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall only when pyproject.toml changed (the stamp is older than it).
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

install: $(VENV)/.installed

run: install
	$(BIN)/magnetar local --port $(PORT)

test: install
	$(BIN)/ruff check .
	$(BIN)/pytest -q

lint: install
	$(BIN)/ruff check .

glue-artifacts: install
	$(BIN)/python spark_glue/package.py build/glue
	@echo "upload: aws s3 sync build/glue/spark_glue s3://<ArtifactsBucket>/spark_glue/"

clean:
	rm -rf $(VENV) build/glue
