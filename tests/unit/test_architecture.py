"""Architecture rules import-linter cannot see: the Lambda handlers are not a package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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
