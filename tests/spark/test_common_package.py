"""spark_glue/package.py builds what the Glue jobs of template.yaml load."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from magnetar_local.launcher import SCRIPTS
from magnetar_local.template import LocalTemplate

ROOT = Path(__file__).resolve().parents[2]


def test_the_artifacts_hold_the_scripts_and_an_importable_libraries_zip(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "spark_glue/package.py"), str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    libs = tmp_path / "spark_glue/magnetar_libs.zip"
    assert str(libs) in done.stdout.splitlines()
    assert (tmp_path / "spark_glue/compact_segments.py").is_file()
    names = set(zipfile.ZipFile(libs).namelist())
    assert {
        "magnetar_jobs/common.py",
        "magnetar_core/engine/__init__.py",
        "magnetar_core/adapters/aws/log.py",
        "magnetar_wire/__init__.py",
        "magnetar_wire/names.py",
    } <= names
    assert not any("__pycache__" in n for n in names)
    # no benchmark harness (they live in benchmarks/magnetar_bench) and no local stack
    assert {n.split("/", 1)[0] for n in names} == {
        "magnetar_core",
        "magnetar_jobs",
        "magnetar_wire",
    }
    assert [n for n in names if "perf" in n or "bench" in n] == []
    scripts = {p.name for p in (tmp_path / "spark_glue").iterdir()} - {"magnetar_libs.zip"}
    assert scripts == {"compact_segments.py", "compact_topic.py", "expire.py"}
    probe = "import magnetar_jobs.garbage as g, magnetar_core.engine as e; print(g.__file__)"
    imported = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path[:0] = [{str(libs)!r}]; {probe}"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.strip() == f"{libs}/magnetar_jobs/garbage.py"


def test_every_glue_job_of_the_template_runs_a_script_of_spark_glue_with_the_libraries():
    template = LocalTemplate()
    jobs = {
        template.resolve(r["Properties"]["Name"]): {
            k: template.resolve(r["Properties"][k])
            for k in ("Command", "DefaultArguments", "GlueVersion")
        }
        for r in template.resources.values()
        if r["Type"] == "AWS::Glue::Job"
    }
    assert sorted(jobs) == [
        "magnetar-compact-segments",
        "magnetar-compact-topic",
        "magnetar-expire",
    ]
    for name, props in jobs.items():
        script = props["Command"]["ScriptLocation"]
        assert (
            script
            == f"s3://magnetar-artifacts-bucket/spark_glue/{SCRIPTS[name.removeprefix('magnetar-')]}"
        )
        assert (ROOT / "spark_glue" / script.rsplit("/", 1)[1]).is_file()
        assert (
            props["DefaultArguments"]["--extra-py-files"]
            == (
                "s3://magnetar-artifacts-bucket/spark_glue/magnetar_libs.zip"  # the stack's ArtifactsBucket
            )
        )
        assert props["DefaultArguments"]["--log-table"] == "magnetar-log"
        assert (props["GlueVersion"], props["Command"]["Name"]) == ("5.0", "glueetl")
