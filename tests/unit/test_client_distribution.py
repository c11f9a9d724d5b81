"""The client-only distribution (sdk/pyproject.toml, ``pip install ./sdk``) holds the SDK and
the wire codec and depends only on what they import: no server-side package or dependency."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIENT_PACKAGES = {"magnetar", "magnetar_wire"}
# import name -> distribution, for every third-party module the client may import
CLIENT_DEPENDENCIES = {
    "requests": "requests",
    "lz4": "lz4",
    "zstandard": "zstandard",
    "cramjam": "cramjam",
    "mmh3": "mmh3",
    "crc32c": "crc32c",
    "websockets": "websockets",  # the notification channel of idle consumers (issue 16)
}
# import name -> distribution of the `tokens` extra, and the only client modules that import them
TOKENS_EXTRA = {"jwt": "pyjwt", "cryptography": "cryptography"}
TOKENS_MODULES = {"magnetar_wire/tokens.py", "magnetar_wire/token_keys.py"}
# the `encryption` extra (cryptography): only the pure cipher module of end-to-end encryption
ENCRYPTION_MODULES = {"magnetar/_encryption/cipher.py"}
# the schema extras: import name -> distribution, and the only client module importing each
SCHEMA_EXTRAS = {"avro": {"fastavro": "fastavro"}, "protobuf": {"google": "protobuf"}}
SCHEMA_MODULES = {"fastavro": {"magnetar/schema/schema_avro.py"},
                  "google": {"magnetar/schema/schema_protobuf.py"}}  # fmt: skip
SERVER_SIDE = {
    "boto3", "botocore", "moto", "pyspark", "aws-lambda-powertools", "aws_lambda_powertools",
    "pyyaml", "yaml", "magnetar_core", "magnetar_local", "magnetar_jobs", "magnetar_bench",
    "magnetar_chaos",
}  # fmt: skip


def _name(requirement: str) -> str:
    """The distribution name of a requirement such as ``lz4==4.4.5 ; extra...``."""
    for stop in "=<>!~[; ":
        requirement = requirement.split(stop, 1)[0]
    return requirement.strip().lower()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """The client's wheel, built offline from a copy of sdk/ (symlinks materialized, as an
    sdist would hold them) with this environment's setuptools."""
    tmp = tmp_path_factory.mktemp("client")
    source = tmp / "sdk"
    shutil.copytree(ROOT / "sdk", source, symlinks=False,
                    ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--quiet", "--wheel-dir", str(tmp / "dist"), str(source)],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (built,) = (tmp / "dist").glob("magnetar_client-*.whl")
    return zipfile.ZipFile(built)


def test_the_client_wheel_holds_only_the_sdk_and_the_wire_codec_with_py_typed(wheel):
    tops = {name.split("/", 1)[0] for name in wheel.namelist()}
    packages = {t for t in tops if not t.endswith(".dist-info")}
    assert packages == CLIENT_PACKAGES
    assert {
        "magnetar/py.typed",
        "magnetar/client.py",
        "magnetar/cli/main.py",
        "magnetar/schema/definition.py",
    } <= set(wheel.namelist())
    assert "magnetar/asyncio/__init__.py" in wheel.namelist()  # subpackages are listed one by one
    assert "magnetar_wire/names.py" in wheel.namelist()


def test_the_client_distribution_lists_every_package_directory_of_the_sdk():
    """setuptools takes only the packages it lists: one left out installs fine in editable
    mode and is missing from the wheel."""
    listed = set(
        tomllib.loads((ROOT / "sdk/pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {".".join(i.parent.relative_to(ROOT / "sdk").parts)
             for i in (ROOT / "sdk/magnetar").rglob("__init__.py")}  # fmt: skip
    assert "magnetar._consumer.acks" in found
    assert found - listed == set()


def test_the_client_wheel_requires_only_the_clients_pinned_dependencies(wheel):
    (meta,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    metadata = Parser().parsestr(wheel.read(meta).decode())
    assert metadata["Name"] == "magnetar-client"
    every = metadata.get_all("Requires-Dist") or []
    requires = [r for r in every if "extra ==" not in r]
    assert {_name(r) for r in requires} == set(CLIENT_DEPENDENCIES.values())
    extra = [r for r in every if 'extra == "tokens"' in r]
    assert {_name(r) for r in extra} == set(TOKENS_EXTRA.values())
    for name, modules in {"encryption": {"cryptography": "cryptography"}, **SCHEMA_EXTRAS}.items():
        pins = [r for r in every if f'extra == "{name}"' in r]
        assert {_name(r) for r in pins} == set(modules.values())
    assert metadata.get_all("Provides-Extra") == ["tokens", "encryption", *SCHEMA_EXTRAS]
    assert all("==" in r for r in every), every
    assert not {_name(r) for r in every} & SERVER_SIDE
    (entry_points,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    assert "magnetar = magnetar.cli.main:main" in wheel.read(entry_points).decode()


def test_every_module_of_the_client_wheel_imports_only_the_stdlib_itself_or_its_dependencies(
    wheel,
):
    allowed = set(sys.stdlib_module_names) | CLIENT_PACKAGES | set(CLIENT_DEPENDENCIES)
    found: dict[str, set[str]] = {}
    for name in wheel.namelist():
        if not name.endswith(".py"):
            continue
        for node in ast.walk(ast.parse(wheel.read(name), name)):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                found.setdefault(module.split(".")[0], set()).add(name)
    # the CLI's service-side verbs are imported by name on use (importlib), never statically
    extras = set(TOKENS_EXTRA) | set(SCHEMA_MODULES)
    assert {m: files for m, files in found.items() if m not in allowed | extras} == {}
    assert set(CLIENT_DEPENDENCIES) <= set(found)  # the check sees the real imports
    # the `tokens` extra's libraries only in the token codec (magnetar.cli.tokens goes through it)
    assert set().union(*(found[m] for m in TOKENS_EXTRA)) == TOKENS_MODULES | ENCRYPTION_MODULES
    assert found["jwt"] <= TOKENS_MODULES  # the encryption extra needs no PyJWT
    # each schema extra's library only in its schema module, imported there on first use
    assert {m: found[m] for m in SCHEMA_MODULES} == SCHEMA_MODULES


def test_the_server_distribution_installs_the_client_rather_than_shipping_its_packages():
    server = tomllib.loads((ROOT / "pyproject.toml").read_text())
    client = tomllib.loads((ROOT / "sdk/pyproject.toml").read_text())
    assert not set(server["tool"]["setuptools"]["packages"]) & CLIENT_PACKAGES
    assert f"magnetar-client=={client['project']['version']}" in server["project"]["dependencies"]
    assert "scripts" not in server["project"]  # the `magnetar` command is the client's


def test_the_server_pins_the_token_libraries_as_the_clients_tokens_extra():
    server = tomllib.loads((ROOT / "pyproject.toml").read_text())
    client = tomllib.loads((ROOT / "sdk/pyproject.toml").read_text())
    extra = set(client["project"]["optional-dependencies"]["tokens"])
    assert extra <= set(server["project"]["dependencies"])


def test_a_folder_named_magnetar_beside_a_script_does_not_shadow_the_installed_client(tmp_path):
    """A clone in a folder named ``magnetar`` with a script beside it: the script's folder
    comes first on ``sys.path`` and holds ``magnetar/`` without ``__init__.py``. The client
    installed by ``make install`` must still be the package imported, not a namespace
    package made of that folder."""
    (tmp_path / "magnetar").mkdir()
    script = tmp_path / "tour.py"
    script.write_text("import magnetar\nprint(magnetar.Client.__module__)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "magnetar.client"
