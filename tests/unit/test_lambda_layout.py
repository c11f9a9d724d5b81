"""The core layer, built as `sam build` builds it, imports as Lambda imports it: every handler
of template.yaml loads with only the layer's ``python/`` (``/opt/python``), its function's
CodeUri (``/var/task``) and the runtime's boto3 on the path.

The layer is built with ``aws-lambda-builders``, the library SAM CLI builds with, as SAM CLI
calls it for a ``BuildMethod: python3.12`` layer: ContentUri copied into the artifacts'
``python/`` subfolder (SAM CLI's layer subfolder for Python runtimes), requirements from
ContentUri's requirements.txt. Its dependencies are not downloaded here (arm64 wheels, no
network in the tests): the import runs with the installed distributions of those
requirements (and what they require) and of boto3, nothing else of this virtualenv.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from aws_lambda_builders.builder import LambdaBuilder
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from magnetar_local.cfn import load_yaml
from magnetar_local.template import DEFAULT_TEMPLATE, LocalTemplate

ROOT = DEFAULT_TEMPLATE.parent
LAYER_SUBFOLDER = {"python3.12": "python"}  # SAM CLI: where a layer's build goes, by BuildMethod
RUNTIME_PACKAGES = ("boto3",)  # what the python3.12 runtime has besides the standard library


def build_layer(document: dict, logical_id: str, build_dir: Path) -> Path:
    """Build layer ``logical_id`` of ``document`` into ``build_dir/<logical_id>`` as SAM CLI
    does (without downloading its requirements); the layer's root (Lambda's ``/opt``)."""
    layer = document["Resources"][logical_id]
    content = ROOT / layer["Properties"]["ContentUri"]
    method = layer["Metadata"]["BuildMethod"]
    root = build_dir / logical_id
    LambdaBuilder(language="python", dependency_manager="pip", application_framework=None).build(
        str(content), str(root / LAYER_SUBFOLDER[method]), str(build_dir / "scratch"),
        str(content / "requirements.txt"), runtime=method,
        architecture=layer["Metadata"].get("BuildArchitecture", "x86_64"),
        download_dependencies=False,
    )  # fmt: skip
    return root


def _closure(names: list[str]) -> set[str]:
    """The installed distributions ``names`` need, themselves included."""
    found: set[str] = set()
    queue = list(names)
    while queue:
        name = canonicalize_name(queue.pop())
        if name in found:
            continue
        found.add(name)
        for text in importlib.metadata.distribution(name).requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                queue.append(requirement.name)
    return found


def runtime_site(requirements: Path, into: Path) -> Path:
    """A site directory holding (as links) only the top-level modules of the distributions
    of ``requirements`` and the runtime's packages, with what they require."""
    pins = [line.split("==")[0] for line in requirements.read_text().splitlines() if "==" in line]
    into.mkdir()
    for name in sorted(_closure([*pins, *RUNTIME_PACKAGES])):
        distribution = importlib.metadata.distribution(name)
        # its modules and its .dist-info (pip installs both; the code reads versions)
        tops = {Path(str(f)).parts[0] for f in distribution.files or []
                if not Path(str(f)).parts[0].endswith((".data", "..", "__pycache__"))}  # fmt: skip
        for top in tops:
            source = Path(str(distribution.locate_file(top)))
            if source.exists() and not (into / top).exists():
                (into / top).symlink_to(source)
    return into


_IMPORT_ALL = """
import importlib, json, sys
layer, site, functions = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
sys.path[:0] = [layer, site]
answers = {}
for logical_id, code_dir, module in functions:
    sys.path.insert(0, code_dir)
    try:
        handler = importlib.import_module(module)
        import magnetar_core
        answers[logical_id] = [callable(getattr(handler, "lambda_handler", None)), magnetar_core.__file__]
    except Exception as exc:
        answers[logical_id] = [False, f"{type(exc).__name__}: {exc}"]
    finally:
        sys.path.remove(code_dir)
        for name in [n for n in sys.modules if n == module.split(".")[0] or n.startswith(module.split(".")[0] + ".")]:
            del sys.modules[name]
print(json.dumps(answers))
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_layer(
        load_yaml(DEFAULT_TEMPLATE), "CoreLayer", tmp_path_factory.mktemp("sam-build")
    )


def test_the_built_layer_holds_the_packages_where_lambda_looks_for_them(built):
    assert (built / "python" / "magnetar_core" / "__init__.py").is_file()  # /opt/python/...
    assert (built / "python" / "magnetar_wire" / "__init__.py").is_file()
    assert not (built / "python" / "python").exists()
    assert not list(built.rglob("__pycache__"))  # the builder leaves compiled files out


def test_a_layer_whose_content_uri_is_the_folder_above_python_is_caught(tmp_path):
    document = load_yaml(DEFAULT_TEMPLATE)
    document["Resources"]["CoreLayer"]["Properties"]["ContentUri"] = "layers/core/"
    wrong = build_layer(document, "CoreLayer", tmp_path)
    assert (wrong / "python" / "python" / "magnetar_core").is_dir()  # /opt/python/python/...
    assert not (wrong / "python" / "magnetar_core").exists()


def test_every_handler_of_the_template_imports_with_only_the_layer_and_the_runtime(built, tmp_path):
    template = LocalTemplate()
    functions = [
        (lid, str(spec.code_dir), spec.handler.rsplit(".", 1)[0])
        for lid, spec in sorted(template.functions.items())
    ]
    assert len(functions) == 15
    layer = built / "python"
    site = runtime_site(layer / "requirements.txt", tmp_path / "runtime-site")
    assert not (site / "magnetar_core").exists() and not (site / "moto").exists()
    environment = {"PATH": os.environ.get("PATH", ""), "AWS_REGION": "us-east-1",
                   "AWS_DEFAULT_REGION": "us-east-1", **template.functions["AdminFunction"].environment}  # fmt: skip
    answer = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _IMPORT_ALL, str(layer), str(site), json.dumps(functions)],
        capture_output=True, text=True, env=environment, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert answer.returncode == 0, answer.stderr
    imported = json.loads(answer.stdout.splitlines()[-1])
    failed = {lid: found for lid, (ok, found) in imported.items() if not ok}
    assert failed == {}
    assert {found for _, found in imported.values()} == {
        str(layer / "magnetar_core" / "__init__.py")
    }


SAM_BUILD = ROOT / ".aws-sam" / "build"


@pytest.mark.skipif(
    not (SAM_BUILD / "template.yaml").is_file(), reason="no `make build-aws` output"
)
def test_a_real_sam_build_put_the_layer_at_opt_python_with_arm64_wheels():
    layer = SAM_BUILD / "CoreLayer" / "python"
    assert (layer / "magnetar_core" / "__init__.py").is_file()
    assert not (layer / "python").exists()
    compiled = [path.name for path in layer.rglob("*.so")]
    assert compiled and all("aarch64" in name or "cpython" not in name for name in compiled)
    assert any("cpython-312-aarch64" in name for name in compiled)
