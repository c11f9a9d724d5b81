"""The data directory of a durable local stack: snapshots plus an append-only journal.

Files in the directory (``n`` is an 8-digit sequence number):

- ``journal-<n>.log``: records, each ``length (4 bytes) | crc32 (4 bytes) | payload``
  (big-endian). A record is appended with one ``write`` and is made durable by ``sync``
  (``fdatasync``; group commit: one flush covers every record written before it).
- ``snapshot-<n>.pkl``: one record (same frame) holding the whole state as it was before
  ``journal-<n>.log``'s first record. Written to ``.tmp``, flushed, then renamed: a snapshot
  either exists whole or not at all.

Recovery (``DataDir.recover``): the newest snapshot that reads back whole, then every journal
segment from its number on, in order. A crash can tear only the end of the newest segment
(records are appended, never rewritten): a record whose frame is incomplete or whose crc does
not match ends the segment, and the segment is truncated there. Such a record was never
flushed, so no caller was told it was stored. A bad record anywhere else is corruption
(``JournalCorrupt``): recovery stops rather than start from a state that skips writes.
"""

from __future__ import annotations

import os
import re
import struct
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path

_HEADER = struct.Struct(">II")
_SEGMENT = re.compile(r"^journal-(\d{8})\.log$")
_SNAPSHOT = re.compile(r"^snapshot-(\d{8})\.pkl$")


class JournalCorrupt(RuntimeError):
    """A record that is not the torn end of the newest segment failed its check."""


def frame(payload: bytes) -> bytes:
    """``payload`` framed as one record (length, crc32, payload)."""
    return _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def read_frames(data: bytes) -> tuple[list[bytes], int]:
    """The payloads of the whole, intact records at the start of ``data`` and the offset
    where they end (``len(data)`` when nothing is torn)."""
    payloads, offset = [], 0
    while offset + _HEADER.size <= len(data):
        length, crc = _HEADER.unpack_from(data, offset)
        start = offset + _HEADER.size
        payload = data[start : start + length]
        if len(payload) < length or zlib.crc32(payload) != crc:
            break
        payloads.append(payload)
        offset = start + length
    return payloads, offset


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    """Appends records to one segment file; ``sync(seq)`` returns once record ``seq`` (as
    returned by ``append``) is on disk. ``append`` is called in the order the writes were
    applied (the caller holds its write lock); ``sync`` outside it, so that one flush
    serves every writer waiting (group commit). ``fsync=False`` skips the flushes (the
    records still reach the OS: they survive the process being killed, not a machine crash)."""

    def __init__(self, path: Path, fsync: bool = True) -> None:
        self.path = path
        self._fsync = fsync
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._written = 0
        self._synced = 0
        self._sync_lock = threading.Lock()
        if fsync:
            _fsync_dir(path.parent)

    @property
    def written(self) -> int:
        """Records appended to this segment."""
        return self._written

    def append(self, payload: bytes) -> int:
        """Write one record (whole or, on a crash, torn at the end); returns its number."""
        data = memoryview(frame(payload))
        while data:
            data = data[os.write(self._fd, data) :]
        self._written += 1
        return self._written

    def sync(self, seq: int) -> None:
        """Return once record ``seq`` is flushed to disk (one flush for all waiting)."""
        if not self._fsync or self._synced >= seq:
            return
        with self._sync_lock:
            if self._synced >= seq:
                return
            target = self._written
            os.fdatasync(self._fd)
            self._synced = max(self._synced, target)

    def close(self) -> None:
        """Flush everything written and close (idempotent)."""
        with self._sync_lock:
            if self._fd < 0:
                return
            if self._fsync:
                os.fdatasync(self._fd)
            self._synced = self._written
            os.close(self._fd)
            self._fd = -1


class DataDir:
    """The files of one data directory (created when missing)."""

    def __init__(self, path: Path | str, fsync: bool = True) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self.path.mkdir(parents=True, exist_ok=True)

    def segment(self, n: int) -> Path:
        return self.path / f"journal-{n:08d}.log"

    def snapshot(self, n: int) -> Path:
        return self.path / f"snapshot-{n:08d}.pkl"

    def _numbers(self, pattern: re.Pattern[str]) -> list[int]:
        found = (pattern.match(p.name) for p in self.path.iterdir())
        return sorted(int(m.group(1)) for m in found if m)

    def segments(self) -> list[int]:
        return self._numbers(_SEGMENT)

    def snapshots(self) -> list[int]:
        return self._numbers(_SNAPSHOT)

    def recover(self) -> tuple[bytes | None, Iterator[bytes], int]:
        """(the newest whole snapshot's payload or None, the journal's payloads after it in
        order, the number of the next segment to write). Truncates the newest segment's torn
        end as the payloads are read. Raises JournalCorrupt."""
        base, state = 0, None
        for n in reversed(self.snapshots()):
            payloads, end = read_frames(self.snapshot(n).read_bytes())
            if len(payloads) == 1 and end == self.snapshot(n).stat().st_size:
                base, state = n, payloads[0]
                break
        segments = [n for n in self.segments() if n >= base]
        following = max(segments, default=base - 1) + 1
        return state, self._replay(segments), max(following, base)

    def _replay(self, segments: list[int]) -> Iterator[bytes]:
        for n in segments:
            path = self.segment(n)
            data = path.read_bytes()
            payloads, end = read_frames(data)
            if end < len(data):
                if n != segments[-1]:
                    raise JournalCorrupt(
                        f"{path}: bad record at byte {end} before the newest segment"
                    )
                with open(path, "r+b") as torn:
                    torn.truncate(end)
                    os.fsync(torn.fileno())
            yield from payloads

    def open_journal(self, n: int) -> Journal:
        return Journal(self.segment(n), fsync=self.fsync)

    def write_snapshot(self, n: int, payload: bytes) -> Path:
        """Store ``payload`` as the state before segment ``n`` (atomically), then remove the
        snapshots and segments it makes unneeded; returns the snapshot's path."""
        final, partial = self.snapshot(n), self.snapshot(n).with_suffix(".tmp")
        with open(partial, "wb") as out:
            out.write(frame(payload))
            out.flush()
            if self.fsync:
                os.fsync(out.fileno())
        partial.replace(final)
        if self.fsync:
            _fsync_dir(self.path)
        for old in self.snapshots():
            if old < n:
                self.snapshot(old).unlink(missing_ok=True)
        for old in self.segments():
            if old < n:
                self.segment(old).unlink(missing_ok=True)
        return final


class DataDirInUse(RuntimeError):
    """Another running service holds the data directory."""


def lock_data_dir(path: Path) -> int:
    """Hold ``path`` for this service (``service.lock``, which records the holder's pid);
    returns the lock's file descriptor, released by closing it or by the process ending
    (also when killed). Raises DataDirInUse when another service holds it."""
    import fcntl

    path.mkdir(parents=True, exist_ok=True)
    fd = os.open(path / "service.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise DataDirInUse(
            f"data directory {path} is in use by another `magnetar local` (pid {holder}): "
            "stop it, or pick another with --data-dir (or --ephemeral)"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def hold_directory(data: DataDir, timeout_s: float = 30.0) -> int:
    """Lock the data directory for this emulator process (``emulator.lock``); waits up to
    ``timeout_s`` for a previous emulator of the directory to exit (one whose parent was
    killed gets SIGTERM and is ending). Returns the lock's file descriptor (held until
    exit). Raises TimeoutError."""
    import fcntl
    import time

    fd = os.open(data.path / "emulator.lock", os.O_RDWR | os.O_CREAT, 0o644)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                raise TimeoutError(f"another emulator still holds {data.path}") from None
            time.sleep(0.05)
