"""Loading a function's class from its stored source.

User code imports ``magnetar`` (``import magnetar as pulsar``): the SDK, or where it is
not installed (the function runner Lambda) a module of the Functions API alone
(``ensure_functions_api``). The source is run as a module named after ``className``'s module part (``--py
exclamation.py --classname exclamation.Exclaim``: module ``exclamation``), not put in
``sys.modules``; classes are cached by function id, version and code, so a new version (or a
function deleted and made again, whose version starts over) is loaded afresh and an
unchanged one once per process.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from typing import Any

from magnetar_core.domain.functions.config import FunctionConfig
from magnetar_wire import functions as functions_api


class FunctionLoadError(Exception):
    """The source does not run, or has no such class, or its class cannot be made."""


class Loader:
    """Instances of functions' classes, one per (function, version, code), made on first
    use."""

    def __init__(self) -> None:
        self._instances: dict[tuple[str, int, str], Any] = {}
        self._lock = threading.Lock()

    def instance(self, config: FunctionConfig) -> Any:
        """The function's object (its class made with no arguments); raises
        FunctionLoadError naming what failed."""
        key = (config.fqfn, config.version, config.code)
        with self._lock:
            found = self._instances.get(key)
        if found is not None:
            return found
        made = _load(config)
        with self._lock:
            for old in [k for k in self._instances if k[0] == config.fqfn]:
                del self._instances[old]
            return self._instances.setdefault(key, made)


def ensure_functions_api() -> None:
    """Make ``import magnetar`` give user code the Functions API: the SDK when it imports
    (locally), else (the Lambda layer has no SDK nor its HTTP dependencies) a module
    ``magnetar`` holding only ``magnetar_wire.functions``' names."""
    try:
        importlib.import_module("magnetar")
    except ImportError:
        api = types.ModuleType("magnetar", "Pulsar Functions' API only (the SDK is not installed)")
        for name in functions_api.__all__:
            setattr(api, name, getattr(functions_api, name))
        sys.modules["magnetar"] = api


def _load(config: FunctionConfig) -> Any:
    ensure_functions_api()
    module_name, _, class_name = config.class_name.rpartition(".")
    module = types.ModuleType(module_name)
    module.__file__ = f"<function {config.fqfn}>/{module_name}.py"
    try:
        exec(compile(config.code, module.__file__, "exec"), module.__dict__)  # noqa: S102 - the function's own code
    except Exception as error:
        raise FunctionLoadError(f"{config.fqfn}: its code raised {error!r}") from error
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type) or not callable(getattr(cls, "process", None)):
        raise FunctionLoadError(
            f"{config.fqfn}: module {module_name} has no class {class_name} with a process method"
        )
    try:
        return cls()
    except Exception as error:
        raise FunctionLoadError(f"{config.fqfn}: {class_name}() raised {error!r}") from error
