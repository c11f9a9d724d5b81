"""Loading a function from its stored source, as Pulsar's Python runtime loads one.

The source is run as a module named after ``className``'s module part (``--py
exclamation.py --classname exclamation.ExclamationFunction``: module ``exclamation``), not
put in ``sys.modules``. What ``className`` names may be (Pulsar's three Python forms):

* a class subclassing ``pulsar.Function``: made with no arguments, ``process(input,
  context)`` called on each message;
* a plain function (``def process(input)``): a native function, called with the input
  (and the context when it takes two parameters); named ``myfunc.process``, or by the
  module alone, ``--classname myfunc``, as Pulsar's docs do (its ``process``);
* a class with no base (``class Upper: def process(self, input)``): made with no
  arguments, ``process(input)`` called, as Pulsar calls a class that is not a
  ``pulsar.Function``.

A class with another base (a ``Function`` of some other library, say) is a load error
naming it, as is source that raises, a missing name or a class that cannot be made: the
batch fails as a system exception (see ``dispatch``), never silently.

**``pulsar`` inside a function.** Pulsar's docs write ``from pulsar import Function``. The
function's module imports through its own ``__import__``: ``import pulsar`` (and ``from
pulsar import ...``, ``from pulsar.functions.function import Function``) there gives
Magnetar's Functions API, the module ``magnetar`` (the SDK
locally; where it is not installed, the function runner Lambda, a module of the Functions
API alone: ``ensure_functions_api``), whether or not pulsar-client is installed. Only the
function's own module sees that alias: ``sys.modules`` is not touched, so a real
pulsar-client in the same process (a test, the in-memory service) is never shadowed.

Loaded functions are cached by function id, version and code, so a new version (or a
function deleted and made again, whose version starts over) is loaded afresh and an
unchanged one once per process.
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import sys
import threading
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from magnetar_core.domain.functions.config import FunctionConfig
from magnetar_wire import functions as functions_api

PULSAR = "pulsar"
"""The module name Pulsar's docs import the Functions API from."""


class FunctionLoadError(Exception):
    """The source does not run, or has no such class or function, or its class is not a
    function's, or cannot be made."""


class NativeFunction:
    """A function that is not a ``pulsar.Function``, called as Pulsar calls it: with the
    input (``takes_context``: and the context too)."""

    def __init__(self, call: Callable[..., Any], takes_context: bool) -> None:
        self._call = call
        self._takes_context = takes_context

    def process(self, input: Any, context: Any) -> Any:  # noqa: A002 - Pulsar's name
        return self._call(input, context) if self._takes_context else self._call(input)


class Loader:
    """Loaded functions (each with ``process(input, context)``), one per (function,
    version, code), loaded on first use."""

    def __init__(self) -> None:
        self._instances: dict[tuple[str, int, str], Any] = {}
        self._lock = threading.Lock()

    def instance(self, config: FunctionConfig) -> Any:
        """The function's object; raises FunctionLoadError naming what failed."""
        key = (config.fqfn, config.version, config.code)
        with self._lock:
            found = self._instances.get(key)
        if found is not None:
            return found
        made = load(config)
        with self._lock:
            for old in [k for k in self._instances if k[0] == config.fqfn]:
                del self._instances[old]
            return self._instances.setdefault(key, made)


def ensure_functions_api() -> types.ModuleType:
    """The module ``import magnetar`` gives user code: the SDK when it imports (locally),
    else (the Lambda layer has no SDK nor its HTTP dependencies) a module ``magnetar``
    holding only ``magnetar_wire.functions``' names, made once."""
    try:
        return importlib.import_module("magnetar")
    except ImportError:
        api = types.ModuleType("magnetar", "Pulsar Functions' API only (the SDK is not installed)")
        for name in functions_api.__all__:
            setattr(api, name, getattr(functions_api, name))
        sys.modules["magnetar"] = api
        return api


def function_builtins(api: types.ModuleType) -> dict[str, Any]:
    """The builtins of a function's module: Python's, with an ``__import__`` that gives
    ``api`` for ``pulsar`` (see the module)."""
    real_import = builtins.__import__

    def import_(name: str, globals: Mapping[str, Any] | None = None,  # noqa: A002 - Python's names
                locals: Mapping[str, Any] | None = None, fromlist: Sequence[str] = (),
                level: int = 0) -> Any:  # fmt: skip
        if level == 0 and (name == PULSAR or name.startswith(PULSAR + ".") and fromlist):
            return api  # from pulsar.functions.function import Function: the API's too
        return real_import(name, globals, locals, fromlist, level)

    names = dict(vars(builtins))
    names["__import__"] = import_
    return names


def load(config: FunctionConfig) -> Any:
    """The function ``config`` names, with ``process(input, context)``; raises
    FunctionLoadError naming what failed."""
    api = ensure_functions_api()
    module_name, _, attribute = config.class_name.rpartition(".")
    if not module_name:  # --classname myfunc: the module's process function
        module_name, attribute = attribute, "process"
    module = types.ModuleType(module_name)
    module.__file__ = f"<function {config.fqfn}>/{module_name}.py"
    module.__dict__["__builtins__"] = function_builtins(api)
    try:
        exec(compile(config.code, module.__file__, "exec"), module.__dict__)  # noqa: S102 - the function's own code
    except Exception as error:
        raise FunctionLoadError(f"{config.fqfn}: its code raised {error!r}") from error
    found = getattr(module, attribute, None)
    if inspect.isfunction(found):
        return NativeFunction(found, _positional(found) >= 2)
    if not isinstance(found, type) or not callable(getattr(found, "process", None)):
        if "." not in config.class_name:
            raise FunctionLoadError(
                f"{config.fqfn}: module {module_name} has no function process (a className "
                "without a dot names a module of a native function, as in Pulsar)"
            )
        raise FunctionLoadError(
            f"{config.fqfn}: module {module_name} has no class {attribute} with a process "
            f"method, nor a function {attribute}"
        )
    _check_base(config.fqfn, found)
    try:
        instance = found()
    except Exception as error:
        raise FunctionLoadError(f"{config.fqfn}: {attribute}() raised {error!r}") from error
    if isinstance(instance, functions_api.Function):
        return instance
    return NativeFunction(instance.process, _positional(instance.process) >= 2)


def _check_base(fqfn: str, cls: type) -> None:
    """A class is a ``pulsar.Function`` or has no base; anything else is refused."""
    if issubclass(cls, functions_api.Function) or cls.__bases__ == (object,):
        return
    bases = ", ".join(f"{b.__module__}.{b.__qualname__}" for b in cls.__bases__)
    raise FunctionLoadError(
        f"{fqfn}: class {cls.__name__} subclasses {bases}, not pulsar.Function: write "
        "`from pulsar import Function` (Magnetar's Functions API inside a function) or "
        "`import magnetar as pulsar`, or a class with no base, or a plain function"
    )


def _positional(call: Callable[..., Any]) -> int:
    try:
        parameters = inspect.signature(call).parameters.values()
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return 2
    return sum(1 for p in parameters if p.kind in kinds)
