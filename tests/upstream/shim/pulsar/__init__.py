"""``import pulsar`` resolving to Magnetar, for running pulsar-client's own test files.

On ``sys.path`` (``tests/upstream/shim``) only while ``run_upstream.py`` runs those files:
``pulsar`` is the ``magnetar`` module itself and every ``pulsar.X`` is ``magnetar.X`` (one
module object, so ``isinstance`` and ``except`` behave as in one package).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

import magnetar


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``pulsar.X`` as the already imported ``magnetar.X``."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:  # fmt: skip
        if not fullname.startswith("pulsar."):
            return None
        try:
            importlib.import_module("magnetar." + fullname[len("pulsar.") :])
        except ModuleNotFoundError:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return sys.modules["magnetar." + spec.name[len("pulsar.") :]]

    def exec_module(self, module: types.ModuleType) -> None:
        """Already executed as ``magnetar.X``."""


sys.meta_path.insert(0, _Alias())
sys.modules[__name__] = magnetar
