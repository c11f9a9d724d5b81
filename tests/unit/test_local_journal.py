"""The local stack's data directory: framed records, torn tails, replay order, snapshots."""

from __future__ import annotations

import os

import pytest

from magnetar_local.journal import (
    DataDir,
    DataDirInUse,
    JournalCorrupt,
    frame,
    lock_data_dir,
    read_frames,
)


def _write(data: DataDir, n: int, payloads: list[bytes]) -> None:
    journal = data.open_journal(n)
    for payload in payloads:
        journal.sync(journal.append(payload))
    journal.close()


def _recovered(data: DataDir) -> tuple[bytes | None, list[bytes], int]:
    state, payloads, following = data.recover()
    return state, list(payloads), following


def test_records_read_back_whole_and_in_the_order_they_were_appended(tmp_path):
    data = DataDir(tmp_path)
    _write(data, 0, [b"first", b"", b"third" * 1000])

    assert _recovered(data) == (None, [b"first", b"", b"third" * 1000], 1)


def test_a_record_torn_at_the_end_of_the_newest_segment_is_dropped_and_truncated(tmp_path):
    data = DataDir(tmp_path)
    _write(data, 0, [b"kept"])
    _write(data, 1, [b"also kept", b"acknowledged"])
    whole = data.segment(1).stat().st_size
    with open(data.segment(1), "ab") as segment:
        segment.write(frame(b"never acknowledged")[:-3])  # the crash came mid-write

    assert _recovered(data) == (None, [b"kept", b"also kept", b"acknowledged"], 2)
    assert data.segment(1).stat().st_size == whole


def test_a_record_whose_crc_does_not_match_ends_the_newest_segment(tmp_path):
    data = DataDir(tmp_path)
    _write(data, 0, [b"one", b"two"])
    raw = bytearray(data.segment(0).read_bytes())
    raw[-1] ^= 0xFF
    data.segment(0).write_bytes(bytes(raw))

    assert _recovered(data)[1] == [b"one"]
    assert read_frames(data.segment(0).read_bytes()) == ([b"one"], len(frame(b"one")))


def test_a_bad_record_before_the_newest_segment_is_corruption_not_a_torn_tail(tmp_path):
    data = DataDir(tmp_path)
    _write(data, 0, [b"one", b"two"])
    _write(data, 1, [b"three"])
    raw = bytearray(data.segment(0).read_bytes())
    raw[-1] ^= 0xFF
    data.segment(0).write_bytes(bytes(raw))

    with pytest.raises(JournalCorrupt, match="journal-00000000"):
        _recovered(data)


def test_recovery_starts_from_the_newest_snapshot_and_replays_the_segments_after_it(tmp_path):
    data = DataDir(tmp_path)
    _write(data, 0, [b"before"])
    _write(data, 1, [b"covered"])
    _write(data, 2, [b"after", b"later"])
    data.write_snapshot(2, b"state before segment 2")

    assert _recovered(data) == (b"state before segment 2", [b"after", b"later"], 3)
    assert data.segments() == [2] and data.snapshots() == [2]


def test_a_snapshot_with_no_segment_after_it_continues_in_its_own_number(tmp_path):
    data = DataDir(tmp_path)
    _write(data, 0, [b"x"])
    data.write_snapshot(1, b"state")

    assert _recovered(data) == (b"state", [], 1)


def test_a_snapshot_left_half_written_is_ignored(tmp_path):
    data = DataDir(tmp_path)
    _write(data, 0, [b"a"])
    data.write_snapshot(1, b"good")
    _write(data, 1, [b"b"])
    data.snapshot(2).with_suffix(".tmp").write_bytes(frame(b"unfinished")[:5])
    data.snapshot(3).write_bytes(frame(b"torn")[:-1])  # never renamed so, but checked anyway

    assert _recovered(data) == (b"good", [b"b"], 2)


def test_a_second_service_on_one_data_directory_is_refused_naming_the_first(tmp_path):
    held = lock_data_dir(tmp_path / "data")
    try:
        with pytest.raises(DataDirInUse, match=f"pid {os.getpid()}"):
            lock_data_dir(tmp_path / "data")
    finally:
        os.close(held)
    os.close(lock_data_dir(tmp_path / "data"))  # free again once the first one let go


def test_sync_flushes_every_record_appended_before_it(tmp_path):
    journal = DataDir(tmp_path).open_journal(0)
    first, second = journal.append(b"1"), journal.append(b"2")
    journal.sync(first)  # one flush covers both

    assert (first, second, journal.written) == (1, 2, 2)
    assert read_frames(journal.path.read_bytes())[0] == [b"1", b"2"]
    journal.close()
    journal.close()
