"""The README is a front door and examples/ holds the longer programs: the README stays short
with a tour of at most six blocks, and every example reads MAGNETAR_SERVICE_URL (default
make run's address) and is listed in the README. That each runs, twice, is
tests/e2e/test_readme.py's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if p.suffix in (".py", ".sh"))


def _section(text: str, heading: str) -> str:
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_the_readme_holds_at_most_250_lines():
    assert len(README.splitlines()) <= 250


def test_the_tour_has_at_most_six_blocks_and_every_one_is_run():
    tour = _section(README, "A five-minute tour")
    fences = re.findall(r"^```(\w*)$", tour, re.M)[::2]  # each block's opening fence
    assert 1 <= len(fences) <= 6, fences
    assert set(fences) <= {"python", "bash"}
    assert "<!-- not run" not in tour


def test_there_are_examples():
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_an_example_is_listed_in_the_readme(example):
    assert f"(examples/{example.name})" in README


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_an_example_names_no_service_but_through_magnetar_service_url(example):
    text = example.read_text()
    if example.suffix == ".py":
        reads = 'os.environ.get("MAGNETAR_SERVICE_URL", "http://127.0.0.1:8080")' in text
    else:  # the CLI reads $MAGNETAR_SERVICE_URL by itself; curl needs it spelt out
        reads = "${MAGNETAR_SERVICE_URL:-http://127.0.0.1:8080}" in text or "curl" not in text
    assert reads, f"{example.name} does not take the service from MAGNETAR_SERVICE_URL"
    assert text.count("127.0.0.1:8080") <= 1, "the default URL is written once, as a default"


USER_READS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    *sorted((ROOT / "events").rglob("README.md")),
    *sorted(
        p for p in (ROOT / "examples").rglob("*") if p.is_file() and "__pycache__" not in p.parts
    ),
]
ISSUE_NUMBER = re.compile(r"\bissues? \d+|issue-\d+|(?<!PKCS)#\d+\b", re.I)


@pytest.mark.parametrize("page", USER_READS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_a_user_reads_names_an_issue_number(page):
    found = [
        f"{page.name}:{n}: {line.strip()[:100]}"
        for n, line in enumerate(page.read_text().splitlines(), 1)
        if ISSUE_NUMBER.search(line)
    ]
    assert found == []


def test_every_relative_link_of_the_readme_names_a_file_that_exists():
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    relative = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert len(relative) >= 20
    assert [t for t in relative if not (ROOT / t).exists()] == []
