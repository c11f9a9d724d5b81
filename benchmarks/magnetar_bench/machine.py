"""What the machine was like while a benchmark ran, so figures from different days (or
machines) can be compared: a fixed pure-Python loop's time and the load average."""

from __future__ import annotations

import os
import time

LOOP_ITERATIONS = 1_000_000


def python_loop_ms(rounds: int = 3) -> float:
    """The best of ``rounds`` timings (ms) of a loop of ``LOOP_ITERATIONS`` integer
    multiply-adds: the single-core speed the embedded stack's Python gets."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        total = 0
        for i in range(LOOP_ITERATIONS):
            total += i * i
        best = min(best, time.perf_counter() - start)
    return round(best * 1000, 1)


def machine_report() -> dict[str, float | int]:
    """``{"python_loop_ms", "load_average_1m", "cpus"}`` now (load: the 1-minute average
    of runnable processes; above ``cpus`` the run shared the CPU with other work)."""
    return {
        "python_loop_ms": python_loop_ms(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count() or 1,
    }
