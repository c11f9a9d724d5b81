"""Architecture rules import-linter cannot see: the Lambda handlers are not a package, and
they read settings once at the edge, on their first request, never at import time."""

from __future__ import annotations

import ast
import configparser
import importlib.util
from pathlib import Path

import pytest

from magnetar_core.api import http
from magnetar_core.domain.triggers.records import TargetFailed

ROOT = Path(__file__).resolve().parents[2]
HANDLERS = sorted((ROOT / "functions").glob("*/app.py"))
ALLOWED = ("magnetar_core.api", "magnetar_core.engine")


def _imported_modules(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


def test_there_are_handlers_to_check():
    assert len(HANDLERS) >= 6


@pytest.mark.parametrize("handler", HANDLERS, ids=lambda p: p.parent.name)
def test_a_handler_imports_only_the_api_edge_and_the_engine_of_our_code(handler):
    ours = [
        m
        for m in _imported_modules(handler)
        if m.split(".")[0] in {"magnetar", "magnetar_core", "magnetar_wire", "magnetar_local"}
    ]
    assert ours, f"{handler} imports nothing of magnetar_core"
    assert [m for m in ours if not m.startswith(ALLOWED)] == []


@pytest.mark.parametrize("handler", HANDLERS, ids=lambda p: p.parent.name)
def test_a_handler_imports_no_third_party_library(handler):
    third_party = [
        m
        for m in _imported_modules(handler)
        if m.split(".")[0] not in {"magnetar_core", "__future__"}
    ]
    assert third_party == []


SETTINGS_NAMES = ("TOPICS_TABLE", "LOG_TABLE", "CURSORS_TABLE", "ENTRIES_BUCKET")


def _load(handler: Path, name: str):
    """A fresh load of a handler module (one Lambda container)."""
    spec = importlib.util.spec_from_file_location(f"arch_{handler.parent.name}_{name}", handler)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("handler", HANDLERS, ids=lambda p: p.parent.name)
def test_a_handler_loads_without_settings_and_reads_them_on_its_first_use(handler, monkeypatch):
    for name in SETTINGS_NAMES:
        monkeypatch.delenv(name, raising=False)

    monkeypatch.delenv("MAGNETAR_API_URL", raising=False)

    module = _load(handler, "bare")  # no settings read at import time
    if handler.parent.name == "function_runner":  # no engine, no store: only the API's URL
        with pytest.raises(TargetFailed, match="MAGNETAR_API_URL must be the HTTP API"):
            module.runner.settings()
        return
    # the authorizer has no engine: its first event builds it from the settings
    first_use = getattr(module, "engine", None) or (lambda: module.authorize({}))

    with pytest.raises(KeyError, match="TOPICS_TABLE"):
        first_use()


def test_a_container_builds_its_engine_once_and_each_container_its_own(monkeypatch):
    for name in SETTINGS_NAMES:
        monkeypatch.setenv(name, f"t-{name.lower()}")
    built: list = []
    monkeypatch.setattr(http.Engine, "build", staticmethod(lambda s: built.append(s) or object()))
    first, second = (_load(ROOT / "functions/ack/app.py", n) for n in ("one", "two"))
    assert built == []

    engines = [first.engine(), first.engine(), second.engine()]

    assert engines[0] is engines[1] and engines[0] is not engines[2]
    assert [s.topics_table for s in built] == ["t-topics_table"] * 2


PACKAGE_ROOTS = [
    ROOT / "layers/core/python/magnetar_core",
    ROOT / "layers/core/python/magnetar_wire",
    ROOT / "sdk/magnetar",
    ROOT / "infra/local/magnetar_local",
    ROOT / "infra/chaos/magnetar_chaos",
    ROOT / "spark_glue/magnetar_jobs",
    ROOT / "benchmarks/magnetar_bench",
]


def _packages() -> set[str]:
    found = set()
    for root in PACKAGE_ROOTS:
        for init in root.rglob("__init__.py"):
            found.add(".".join(init.parent.relative_to(root.parent).parts))
    return found


def test_the_no_cycles_contract_names_every_package_of_ours():
    """A package left out of the acyclic contract could grow an import circle unseen."""
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    ancestors = set(config["importlinter:contract:acyclic"]["ancestors"].split())
    assert len(_packages()) >= 30
    assert ancestors == _packages()
