"""What the code tells a reader points at pages that exist: every ``docs/<page>.md`` a source
file, template.yaml, a pyproject.toml or the Makefile names is a file (the docs were split into
docs/architecture/, docs/http-api/ and docs/guide/), every relative link of events/ READMEs
names a file, and what a user reads of the code (template.yaml, the client's sources, the
local stack's and the benchmarks' modules) names no issue number."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_docs_front_door import ISSUE_NUMBER

ROOT = Path(__file__).resolve().parents[2]
SKIPPED = {".venv", "site", "build", ".tools", "node_modules", "__pycache__", ".git", "docs"}
SUFFIXES = {".py", ".yaml", ".yml", ".toml", ".sh", ".html", ".js"}


def _sources() -> list[Path]:
    found = [ROOT / "Makefile"]
    for path in ROOT.rglob("*"):
        parts = path.relative_to(ROOT).parts
        if path.suffix in SUFFIXES and path.is_file() and not SKIPPED & set(parts):
            found.append(path)
    return sorted(found)


DOC_PATH = re.compile(r"\bdocs/[A-Za-z0-9_/.-]+?\.md\b")


def test_every_docs_page_the_code_names_exists():
    missing = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in _sources()
        for name in sorted(set(DOC_PATH.findall(path.read_text(errors="replace"))))
        if not (ROOT / name).is_file()
    ]
    assert missing == []


@pytest.mark.parametrize(
    "readme",
    sorted((ROOT / "events").rglob("README.md")),
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_every_relative_link_of_an_events_readme_names_a_file(readme):
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme.read_text())
    relative = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert [t for t in relative if not (readme.parent / t).exists()] == []


USER_READS_CODE = [
    ROOT / "template.yaml",
    ROOT / "sdk" / "pyproject.toml",
    *sorted((ROOT / "sdk" / "magnetar").rglob("*.py")),
    *sorted((ROOT / "infra" / "local" / "magnetar_local").rglob("*.py")),
    *sorted((ROOT / "benchmarks" / "magnetar_bench").rglob("*.py")),
]


@pytest.mark.parametrize("path", USER_READS_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_help_description_or_client_source_names_an_issue_number(path):
    found = [
        f"{path.name}:{n}: {line.strip()[:100]}"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if ISSUE_NUMBER.search(line)
    ]
    assert found == []
