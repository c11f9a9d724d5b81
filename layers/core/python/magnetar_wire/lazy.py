"""A package's names on first use (PEP 562): the module ``__getattr__`` and ``__dir__`` that
``magnetar_wire`` and the SDK's ``magnetar`` share, so ``import`` of either costs only what a
caller then uses."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence


def lazy_names(
    package: str, module_of: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` (its ``__name__``): a name of
    ``module_of`` (name -> the relative module defining it) is imported from its module, any
    other name as a submodule (``package.name``), and bound in the package's globals so the
    next access is a plain lookup; ``__dir__`` lists the globals and ``public``."""
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> object:
        module = module_of.get(name)
        if module is not None:
            value: object = getattr(importlib.import_module(module, package), name)
        elif name.startswith("__"):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        else:
            try:
                value = importlib.import_module(f".{name}", package)
            except ModuleNotFoundError as e:
                if e.name != f"{package}.{name}":  # the submodule exists; one of its imports not
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__
