"""``import magnetar`` loads the SDK's names on first use (sdk/magnetar/__init__.py, PEP 562):
a program, and every ``magnetar`` CLI call, pays only for what it uses. These tests fail when
an eager import comes back (the import checks run in a fresh interpreter, where nothing else
has loaded the modules yet), when a public name no longer resolves, or when the names type
checkers see (the ``TYPE_CHECKING`` imports) and the names loaded at run time drift apart."""

from __future__ import annotations

import ast
import importlib
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import magnetar
import magnetar_wire

SDK = Path(magnetar.__file__).parent
# what a plain `import magnetar` must not load: the client, the HTTP stack, the codecs
HEAVY = ("magnetar.client", "magnetar.consumer", "magnetar.producer", "magnetar.asyncio",
         "magnetar.schema", "magnetar._transport.http", "magnetar_wire.entry", "requests",
         "urllib3", "lz4", "zstandard", "cramjam", "cryptography", "fastavro", "websockets",
         "asyncio")  # fmt: skip


def _loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


def test_import_magnetar_loads_neither_the_client_nor_the_http_stack_nor_the_codecs():
    loaded = _loaded_after("import magnetar")
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
    assert "magnetar" in loaded


def test_the_wire_package_loads_the_entry_codec_and_its_compression_libraries_on_first_use():
    loaded = _loaded_after("from magnetar_wire import names")
    assert "magnetar_wire.names" in loaded
    assert loaded.isdisjoint({"magnetar_wire.entry", "magnetar_wire.compression", "lz4",
                              "zstandard", "cramjam"})  # fmt: skip
    lz4 = _loaded_after("from magnetar_wire.compression import Codec, compress\n"
                        "compress(Codec.LZ4, b'x' * 100)")  # fmt: skip
    assert "lz4" in lz4 and lz4.isdisjoint({"zstandard", "cramjam"})


def test_an_admin_command_parses_without_the_client_or_produce_and_consume():
    loaded = _loaded_after(
        "from magnetar.cli.admin import command\n"
        "command._parser().parse_args(['topics', 'list', 'public/default'])"
    )
    assert "magnetar.cli.admin.command" in loaded
    unwanted = {"magnetar.client", "magnetar.cli.produce_consume", "magnetar_wire.entry",
                "requests", "lz4", "zstandard", "cramjam"}  # fmt: skip
    assert loaded.isdisjoint(unwanted), sorted(loaded & unwanted)


@pytest.mark.parametrize("name", magnetar.__all__)
def test_every_public_name_resolves_to_the_object_of_its_defining_module(name):
    value = getattr(magnetar, name)
    module = magnetar._LAZY.get(name)
    if module is None:  # a submodule: asyncio, exceptions, schema
        assert value is importlib.import_module(f"magnetar.{name}")
    else:
        assert value is getattr(importlib.import_module(module, "magnetar"), name)
    assert name in dir(magnetar)


def test_from_import_submodule_attribute_pickling_and_isinstance_behave_as_before():
    from magnetar import ConsumerType, MessageId, PulsarException, Timeout

    assert magnetar.client.Client is magnetar.Client  # a submodule, as after an eager import
    assert magnetar._pulsar.MessageId is MessageId
    assert isinstance(Timeout("late"), PulsarException)
    assert pickle.loads(pickle.dumps(ConsumerType.Shared)) is ConsumerType.Shared
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        _ = magnetar.NoSuchName
    with pytest.raises(ImportError):
        exec("from magnetar import NoSuchName", {})


def _type_checking_imports(path: Path) -> dict[str, str]:
    """name -> relative module of the ``from .x import name`` imports under ``if TYPE_CHECKING``
    (submodule imports ``from . import x`` left out)."""
    tree = ast.parse(path.read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")  # fmt: skip
    names = {}
    for node in block.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = "." * node.level + node.module
    return names


@pytest.mark.parametrize("package", [magnetar, magnetar_wire], ids=lambda p: p.__name__)
def test_the_names_type_checkers_see_are_the_names_loaded_at_run_time(package):
    assert _type_checking_imports(Path(package.__file__)) == package._LAZY
    submodules = set(package.__all__) - set(package._LAZY)
    assert all((Path(package.__file__).parent / s).exists() or
               (Path(package.__file__).parent / f"{s}.py").exists() for s in submodules)  # fmt: skip
