"""The server distribution (pyproject.toml, ``pip install .``) lists every package of its
roots: setuptools takes only the packages it lists, so a subpackage left out installs fine
in editable mode (``make install``) and is missing from a built wheel (seen: ``ports`` and
``services.triggers`` were not in ``magnetar_server-0.1.0-py3-none-any.whl``)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _package_directories() -> set[str]:
    """Every directory with an ``__init__.py`` below each mapped top-level package."""
    found = set()
    for top, folder in _setuptools()["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            parts = init.parent.relative_to(base).parts
            found.add(".".join((top, *parts)))
    return found


def test_every_package_directory_is_listed_for_setuptools():
    assert set(_setuptools()["packages"]) == _package_directories()
