"""Build the Glue / EMR Serverless artifacts: the job scripts and one zip of the libraries.

    python spark_glue/package.py [OUT]          (default build/glue; `make glue-artifacts`)

Writes ``OUT/spark_glue/<job>.py`` for every job script and ``OUT/spark_glue/magnetar_libs.zip``
holding magnetar_core, magnetar_wire and magnetar_jobs (what ``--extra-py-files`` names in
template.yaml). ``make deploy`` uploads them into the stack's ArtifactsBucket
(``infra/deploy/artifacts.py``).
"""

from __future__ import annotations

import shutil
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PACKAGES = {
    "magnetar_core": ROOT / "layers/core/python/magnetar_core",
    "magnetar_wire": ROOT / "layers/core/python/magnetar_wire",
    "magnetar_jobs": HERE / "magnetar_jobs",
}


def build(out: Path) -> list[Path]:
    """Write the artifacts under ``out/spark_glue``; returns the files written."""
    target = out / "spark_glue"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    written = []
    for script in sorted(HERE.glob("*.py")):
        if script.name != "package.py":
            written.append(Path(shutil.copy2(script, target / script.name)))
    libs = target / "magnetar_libs.zip"
    with zipfile.ZipFile(libs, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, folder in PACKAGES.items():
            for path in sorted(folder.rglob("*.py")):
                if "__pycache__" not in path.parts:
                    archive.write(path, f"{name}/{path.relative_to(folder)}")
    written.append(libs)
    return written


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build/glue")
    for path in build(out):
        print(path)
