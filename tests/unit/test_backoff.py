"""JitterBackoff: full-jitter exponential backoff, reproducible with a seeded Random."""

import random

import pytest

from magnetar_core.domain.runtime import JitterBackoff, Runtime


@pytest.mark.parametrize("attempt", range(0, 25))
def test_delays_stay_within_zero_and_the_capped_exponential_bound(attempt):
    backoff = JitterBackoff(base_ms=2.0, cap_ms=100.0, rng=random.Random(attempt))
    bound = min(100.0, 2.0 * 2**attempt)
    delays = [backoff.delay_ms(attempt) for _ in range(500)]
    assert all(0 <= d <= bound for d in delays)
    assert max(delays) > bound * 0.9, "delays should spread over the whole window"


def test_the_first_attempts_double_the_window_until_the_cap():
    backoff = JitterBackoff(base_ms=3.0, cap_ms=20.0, rng=random.Random(7))
    windows = [max(backoff.delay_ms(a) for _ in range(2000)) for a in range(5)]
    assert 2.9 < windows[0] <= 3.0
    assert 5.8 < windows[1] <= 6.0
    assert 11.6 < windows[2] <= 12.0
    assert 19.0 < windows[3] <= 20.0
    assert 19.0 < windows[4] <= 20.0


def test_the_same_seed_gives_the_same_delays():
    a = JitterBackoff(rng=random.Random(42))
    b = JitterBackoff(rng=random.Random(42))
    assert [a.delay_ms(i) for i in range(10)] == [b.delay_ms(i) for i in range(10)]


def test_a_delay_is_uniform_over_the_window_drawn_from_the_given_random():
    expected = random.Random(5).uniform(0, 16.0)
    assert JitterBackoff(base_ms=2.0, cap_ms=100.0, rng=random.Random(5)).delay_ms(3) == expected


def test_huge_attempt_numbers_are_capped_without_overflow():
    backoff = JitterBackoff(base_ms=2.0, cap_ms=100.0, rng=random.Random(1))
    assert 0 <= backoff.delay_ms(10_000) <= 100.0


def test_the_default_runtime_uses_the_default_backoff_window():
    backoff = Runtime().backoff
    assert (backoff.base_ms, backoff.cap_ms) == (2.0, 100.0)
