"""What the machine was like while a benchmark ran, so figures from different days (or
machines) can be compared: a fixed pure-Python loop's time, a thread-to-thread socket round
trip (the embedded stack is made of such hand-offs) and the load average."""

from __future__ import annotations

import os
import socket
import threading
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


def socket_round_trip_us(round_trips: int = 2000) -> float:
    """The mean time (µs) of a 1-byte round trip between two threads over a socket pair:
    what the GIL hand-offs and system calls of the embedded stack cost here."""
    ours, theirs = socket.socketpair()

    def echo() -> None:
        while data := theirs.recv(64):
            theirs.sendall(data)

    thread = threading.Thread(target=echo, daemon=True)
    thread.start()
    start = time.perf_counter()
    for _ in range(round_trips):
        ours.sendall(b"x")
        ours.recv(64)
    elapsed = time.perf_counter() - start
    ours.close()
    thread.join(5)
    theirs.close()
    return round(elapsed / round_trips * 1e6, 1)


def machine_report() -> dict[str, float | int]:
    """``{"python_loop_ms", "socket_round_trip_us", "load_average_1m", "cpus"}`` now (load:
    the 1-minute average of runnable processes; above ``cpus`` the run shared the CPU with
    other work)."""
    return {
        "python_loop_ms": python_loop_ms(),
        "socket_round_trip_us": socket_round_trip_us(),
        "load_average_1m": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count() or 1,
    }
