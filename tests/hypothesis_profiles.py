"""Hypothesis profiles of the suite: ``ci`` (every example) and ``fast`` (a tenth of them).

The profile is ``$HYPOTHESIS_PROFILE`` when set, else ``ci`` when ``$CI`` is true (CI
services set ``CI=true``), else ``fast``. tests/conftest.py registers and loads it.

A test that sets its own number of examples writes ``max_examples=examples(300)``: 300
under ``ci``, 30 under ``fast``.
"""

from __future__ import annotations

import os

from hypothesis import settings

FAST_SHARE = 10
"""``fast`` runs 1/FAST_SHARE of each test's examples (at least MIN_FAST_EXAMPLES)."""
MIN_FAST_EXAMPLES = 5
CI_EXAMPLES = 100  # Hypothesis' own default


def profile_name(env: dict[str, str] | None = None) -> str:
    """``ci`` or ``fast`` (or whatever ``$HYPOTHESIS_PROFILE`` names) for ``env``."""
    env = dict(os.environ) if env is None else env
    if env.get("HYPOTHESIS_PROFILE"):
        return env["HYPOTHESIS_PROFILE"]
    return "ci" if env.get("CI", "").lower() in ("1", "true", "yes") else "fast"


PROFILE = profile_name()


def examples(full: int, minimum: int = MIN_FAST_EXAMPLES) -> int:
    """The number of examples of a test that asks for ``full`` under ``ci``; under ``fast``
    a tenth, at least ``minimum`` (a test whose examples each run Spark jobs asks for less
    than the default floor, which would run nearly all of them)."""
    if PROFILE == "ci":
        return full
    return max(minimum, full // FAST_SHARE)


def register_profiles() -> str:
    """Register ``ci`` and ``fast`` and load the chosen one; returns its name.

    No deadline in either: the machines running the suite are shared, and a slow example
    is not a failure here (no test relies on Hypothesis' deadline).
    """
    settings.register_profile("ci", max_examples=CI_EXAMPLES, deadline=None, print_blob=True)
    settings.register_profile("fast", max_examples=examples(CI_EXAMPLES), deadline=None)
    settings.load_profile(PROFILE)
    return PROFILE
