"""How tests are dealt to pytest-xdist's workers (tests/dealing.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from dealing import dealt, run_order, spark_workers, weight


@dataclass
class Item:
    """What the dealing reads of a pytest item: its file, markers and fixtures."""

    path: str
    markers: set[str] = field(default_factory=set)
    fixturenames: tuple[str, ...] = ()

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def suite() -> list[Item]:
    spark_files = [[Item(f"spark/{n}.py", {"spark"}, ("spark",)) for _ in range(6)] for n in "abcd"]
    jobs = [Item("e2e/jobs.py", {"emulator", "spark"}, ("local_stack", "jobs_in_process", "spark"))]
    slow = [Item(f"e2e/slow_{n}.py", {"emulator", "slow"}, ("local_stack",)) for n in range(4)]
    stack = [[Item(f"e2e/s{n}.py", {"emulator"}) for _ in range(5)] for n in range(8)]
    fuzz = [Item("fuzz/emulator.py", {"fuzz", "emulator"}) for _ in range(40)]
    unit = [[Item(f"unit/u{n}.py") for _ in range(30)] for n in range(10)]
    items = [*sum(spark_files, []), *jobs, *slow, *sum(stack, []), *fuzz, *sum(unit, [])]
    return sorted(items, key=run_order)


def slices(items: list[Item], workers: int) -> list[list[Item]]:
    """``items`` cut as worksteal cuts them: floor(left / nodes left) each."""
    out, start = [], 0
    for i in range(workers):
        size = (len(items) - start) // (workers - i)
        out.append(items[start : start + size])
        start += size
    return out


def test_the_files_that_use_a_spark_session_go_to_half_of_the_workers_only():
    parts = slices(dealt(suite(), 4), 4)
    with_spark = [i for i, part in enumerate(parts) if any("spark" in t.fixturenames for t in part)]
    assert with_spark == [0, 1]
    assert spark_workers(4) == 2 and spark_workers(3) == 1 and spark_workers(1) == 1


def test_every_test_is_dealt_once_and_each_file_stays_on_one_slice():
    items = suite()
    parts = slices(dealt(items, 4), 4)
    assert sorted(map(id, sum(parts, []))) == sorted(map(id, items))
    heavy_files = {t.path for t in items if run_order(t) < 3}
    for path in heavy_files:
        assert sum(any(t.path == path for t in part) for part in parts) == 1, path


def test_the_emulator_fuzz_lane_weighs_as_light_requests_not_as_slow_tests():
    fuzz = Item("fuzz/emulator.py", {"fuzz", "emulator"})
    assert run_order(fuzz) == -1 and weight(fuzz) < weight(Item("e2e/a.py", {"emulator"}))
    parts = slices(dealt(suite(), 4), 4)
    loads = [sum(map(weight, part)) for part in parts]
    assert max(loads) < 1.5 * min(loads), loads  # the fuzz lane's slice takes its share too
