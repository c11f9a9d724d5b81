# Magnetar developer commands. Needs only python3 (3.11+) and access to a package index.
#   make run   - start the service locally (PORT=8080 by default)
#   make test  - lint + the whole test suite
#   make lint  - ruff only

PORT ?= 8080
VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(shell command -v python3.11 2>/dev/null || command -v python3)

.PHONY: install run test lint clean

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

clean:
	rm -rf $(VENV)
