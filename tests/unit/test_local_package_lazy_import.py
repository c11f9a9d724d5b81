"""``magnetar_local`` loads ``LocalStack`` and ``StackError`` on first use (its
``__init__.py``, PEP 562): ``magnetar jobs run`` and Spark's Python worker daemon
(``magnetar_local.spark_daemon``) import one module of the package each, not the stack, the
gateway and the engine with it. These tests fail when an eager import comes back (checked in
a fresh interpreter, where nothing else has loaded the modules yet) or when the package's
names no longer resolve to their modules' objects."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import magnetar_local

# what neither the jobs' launcher nor the Spark worker daemon needs
HEAVY = ("magnetar_local.stack", "magnetar_local.gateway", "magnetar_local.readiness",
         "magnetar_core.engine", "moto", "boto3")  # fmt: skip


def _loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    "module", ["magnetar_local.launcher", "magnetar_local.jobs", "magnetar_local.spark_daemon"]
)
def test_a_module_of_the_package_loads_without_the_stack_the_gateway_or_the_engine(module):
    loaded = _loaded_after(f"import {module}")
    assert module in loaded
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_the_package_names_resolve_to_the_stack_and_its_error():
    from magnetar_local.readiness import StackError
    from magnetar_local.stack import LocalStack

    assert magnetar_local.LocalStack is LocalStack
    assert magnetar_local.StackError is StackError
    assert sorted(magnetar_local.__all__) == ["LocalStack", "StackError"]
    with pytest.raises(AttributeError, match="no attribute 'Gateway'"):
        magnetar_local.Gateway  # noqa: B018 - the lookup is the test
