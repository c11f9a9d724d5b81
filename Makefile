# Magnetar developer commands. Needs only python3 (3.11+) and access to a package index.
#   make run       - start the service locally (PORT=8080 by default)
#   make stop      - stop the services `make run` started here
#   make test      - static checks + the whole test suite (what .ci/run runs)
#   make test-fast - the tests that start no stack and no JVM and do not fuzz (unit, in-memory services), < 1 min
#   make lint      - ruff only
#   make checkov   - checkov on template.yaml (part of make check)
#   make glue-artifacts - the Spark jobs' scripts and libraries zip in build/glue/
#   make docs      - the documentation site (mkdocs.yml) in site/
#   make build-aws - `sam build` of template.yaml (SAM CLI in its own venv, .tools/sam)
#   make deploy    - build, `sam deploy` and upload the Glue artifacts (STACK, REGION, PARAMS)
#   make undeploy  - empty the stack's artifacts bucket and `sam delete` the stack

PORT ?= 8080
VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(shell command -v python3.11 2>/dev/null || command -v python3)
# pytest-xdist: tests spread over WORKERS processes, each with its own embedded stack and
# (once it runs a Spark test) its own local SparkSession; see tests/conftest.py (how the
# files are dealt to the workers). 4 on 2 cores (measured: 409 s with 4, 448 s with 2;
# later 326 s with 4, 387 s with 5, then 311 s with 4 and 313 s with 3: the run keeps both
# cores 100 % busy, so only less CPU work makes it faster; 2026-11-28 on a quiet machine,
# 4,537 tests: pytest 397 s with 4, make test 6 min 50 s; 474 s with 6; then 4,710 tests at
# d012482 with MAGNETAR_TEST_CPU: pytest 338 s with 4 and 338 s with 5, make test 5 min 52 s;
# without it at 3b787cd: pytest 300 s and 303 s, make test 5 min 13 s and 5 min 14 s; at b48171c
# pytest 250 s, make test 4 min 12 s, from a fresh clone 4 min 58 s; docs/testing.md).
# CPU per lane (2026-11-28, load 11-25 on this 2-core machine, so CPU-s, not wall: each run
# got 4-13 % of a core; `/usr/bin/time`, which misses JVMs nobody waits for; every process
# compiled its modules: PYTHONDONTWRITEBYTECODE was set, see tests/conftest.py): static checks
# from a fresh clone 31 (mypy 17.5, checkov 7.0, cfn-lint 4.9, mkdocs 1.1, lint-imports 0.3,
# ruff 0.2); test-fast's selection 90 (2,788 tests, 2 workers); fuzz 86 (450 tests, CI
# profile); tests/e2e/test_expire.py and test_readme.py 79 (13 tests; the expire passes and
# the README's Spark blocks); the 11 Hypothesis files under CI 31 (a tenth under `fast`).
# The emulator/e2e and Spark lanes were not measured alone (over an hour each at that load).
# After this stop's changes, `make test-fast` (3 workers, caches written): 74.7 CPU-s for the
# whole process tree (a cgroup's cpuacct), 2,788 passed: about 37 s of both cores. `make test`
# (CI=true, warm mypy cache): 793 CPU-s (static checks 12, pytest 781: 3,819 passed, 1 failed),
# 1,189 s of pytest at load 17-28; 781 CPU-s is about 390 s of both cores, over the budget.
# Per test: MAGNETAR_TEST_CPU=/tmp/cpu.jsonl CI=true make test (or pytest on some files), then
# .venv/bin/python tests/cpu_accounting.py /tmp/cpu.jsonl: the CPU-s of each test with every
# process it started (JVMs, magnetar local, moto), per lane and file (docs/testing.md).
# 2026-11-28, files alone (CI=true, CPU-s with their start-up), before -> after this stop:
# the fuzz lane (tests/fuzz in one process) 77.6 -> 68.8, its emulator part 28.1 -> 17.3 (a
# fuzzed PUT .../compaction no longer starts a Spark job and JVM); the Spark files on 2 of the
# 4 workers instead of 3 (a JVM and its warm-up, about 10 CPU-s, fewer); about 20 CPU-s of
# make test's ~790 in all (such measurements vary by 2-3 CPU-s from run to run). Then CI=true
# make test (load 2-8, the run got 1.1 cores): 4,437 passed, pytest 469 s, 8:01 wall, 608.8
# CPU-s in pytest's process trees (e2e 277, integration 91, unit 85, spark 76, fuzz 50,
# collection 18, contract 6.5); under heavy load CPU-s inflate too (the same suite before, at
# load 12-18: 771). The rest
# is work the tests ask for: e2e/test_readme.py 60, e2e/test_expire.py 47, integration/
# test_auth_matrix.py 30 (10-12 since: its matrix on the memory stack), spark/
# test_expire_transform.py 28, integration/test_compaction.py 26,
# e2e/test_durable_local.py and test_chaos_faults.py 20.5, fuzz memory 40; an emulator test's
# CPU is about half moto's (py-spy), half the handlers', the SDK's and the test's.
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

.PHONY: chromium install run stop test suite test-fast check static-types static-rest bytecode-caches checkov lint clean glue-artifacts docs build-aws deploy undeploy

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

# Static checks, before any test runs: lint, types, architecture contracts (.importlinter),
# the template (cfn-lint, checkov) and the docs site. Each is one process on one core, so two
# run at once (-j2; -O keeps each one's output together): mypy, the longest, beside the rest
# (measured from a fresh clone, CPU-s: mypy 17.5; ruff 0.2, lint-imports 0.3, cfn-lint 4.9,
# checkov 7.0, mkdocs 1.1): about 18 s on 2 cores instead of 31 s one after the other.
STATIC := static-types static-rest
check: install
	@$(MAKE) --no-print-directory -j2 -O $(STATIC)

static-types:
	$(BIN)/mypy

static-rest:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-logo
	$(BIN)/cfn-lint template.yaml
	@$(MAKE) --no-print-directory checkov
	$(MAKE) --no-print-directory docs

# The documentation site; strict (mkdocs.yml): a broken link or anchor, or a page left out of
# nav, fails the build (not with --quiet: mkdocs then counts no warnings).
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# checkov on template.yaml (.checkov.yaml: what it checks and the reviewed skips, each with its
# reason), in a virtualenv of its own (its pins conflict with the project's), installed once
# per pinned version. BC_SKIP_MAPPING: no call home for its guideline links.
CHECKOV_VERSION := 3.3.30
CHECKOV_VENV := .tools/checkov
checkov:
	@test -f $(CHECKOV_VENV)/.installed-$(CHECKOV_VERSION) || { rm -rf $(CHECKOV_VENV) && $(PYTHON) -m venv $(CHECKOV_VENV) \
	  && $(CHECKOV_VENV)/bin/python -m pip install --quiet --disable-pip-version-check checkov==$(CHECKOV_VERSION) 2>&1 | grep -v '^WARNING: Location' ; \
	  $(CHECKOV_VENV)/bin/checkov --version >/dev/null && touch $(CHECKOV_VENV)/.installed-$(CHECKOV_VERSION); }
	BC_SKIP_MAPPING=TRUE $(CHECKOV_VENV)/bin/checkov --config-file .checkov.yaml

# The static checks run beside the tests, not before them: the tests keep the two cores only
# ~1.7 busy on average (some wait on real time), and the static checks' ~30 CPU-s fill part of
# that instead of taking ~12-18 s of wall clock first. Either failing fails make test (-O keeps
# each one's output together, so the tests' report comes when they end).
# On a fresh checkout no module is compiled yet: one collection first writes every bytecode
# cache (pytest's rewritten test modules and plugins too), instead of each of the WORKERS
# compiling all of it at once (measured on a fresh clone: 21 CPU-s a worker, 4.3 with caches).
test: install chromium
	@$(MAKE) --no-print-directory -j3 -O $(STATIC) suite

suite: bytecode-caches
	$(PYTEST) -n $(WORKERS)

bytecode-caches:
	@test -d tests/unit/__pycache__ || $(BIN)/pytest -q --collect-only -p no:cacheprovider >/dev/null

# -p no:schemathesis: only the fuzz lane uses its pytest plugin (loading it: 1.4 CPU-s a process).
test-fast: install
	$(PYTEST) -n $(FAST_WORKERS) -p no:schemathesis -m "$(FAST)"

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

glue-artifacts: install
	$(BIN)/python spark_glue/package.py build/glue

# ---------------------------------------------------------------- AWS (docs/deploying.md)
# SAM CLI in a tool venv of its own (never the project's: its pins are not ours), on Python
# 3.12, the functions' runtime, which `sam build` also needs on PATH to build for it:
# python3.12 when it runs, else pyenv's.
STACK ?= magnetar
REGION ?= $(or $(AWS_REGION),$(AWS_DEFAULT_REGION),us-east-1)
PARAMS ?=
SAM_CLI_VERSION := 1.170.0
SAM_VENV := .tools/sam
SAM := $(SAM_VENV)/bin/sam
PYTHON312 := $(shell for p in python3.12 $$(pyenv root 2>/dev/null)/versions/3.12*/bin/python3.12; do \
  "$$p" -c 'import sys; assert sys.version_info[:2] == (3, 12)' 2>/dev/null && { command -v "$$p"; break; }; done)
SAM_ENV := PATH="$(dir $(PYTHON312)):$$PATH" SAM_CLI_TELEMETRY=0
ARTIFACTS := $(BIN)/python infra/deploy/artifacts.py --stack $(STACK) --region $(REGION)

$(SAM):
	@test -n "$(PYTHON312)" || { echo "build-aws: needs Python 3.12 (python3.12 on PATH, or pyenv install 3.12)"; exit 1; }
	$(PYTHON312) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install --quiet aws-sam-cli==$(SAM_CLI_VERSION)

# .aws-sam/build: the layer at CoreLayer/python/ (Lambda's /opt/python), its requirements
# as arm64 wheels (pip downloads them for the template's architecture, no Docker)
build-aws: $(SAM)
	$(SAM_ENV) $(SAM) build --template-file template.yaml

deploy: glue-artifacts build-aws
	$(SAM_ENV) $(SAM) deploy --stack-name $(STACK) --region $(REGION) \
	  $(if $(strip $(PARAMS)),--parameter-overrides $(PARAMS))
	$(ARTIFACTS) upload build/glue/spark_glue

undeploy: install $(SAM)
	$(ARTIFACTS) empty
	$(SAM_ENV) $(SAM) delete --stack-name $(STACK) --region $(REGION) --no-prompts

clean:
	rm -rf $(VENV) .tools build/glue site .aws-sam
