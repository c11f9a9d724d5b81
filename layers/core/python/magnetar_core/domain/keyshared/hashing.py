"""The sticky key hash and what every Key_Shared selector shares.

Pulsar hashes a message's *sticky key* with Murmur3 32-bit (seed 0) and reduces it modulo the
hash range size, 65,536, so every hash is an int in ``0..65535``. The sticky key is the
message's ordering key when it has one, else its key, else the constant ``b"NONE_KEY"`` (as
Pulsar's ``Commands.peekStickyKey`` does), so all keyless messages share one hash and go to one
consumer.

Pulsar's ``Murmur3_32Hash.makeHash`` returns ``hash & Integer.MAX_VALUE`` (the sign bit
cleared). Because 2**31 is a multiple of 65,536, clearing the sign bit never changes
``hash % 65536``: the seed's ``murmur32("Order-3459134") = 3112179635`` (unsigned) gives the
same 6067 as the masked 964695987. It does matter for ``% 65535`` (consistent hashing ring
points), where we follow Pulsar and mask first.

Pulsar 4.0 itself reserves hash 0 ("not set") and uses ``1..65535``; Magnetar keeps the whole
``0..65535`` space of the seed's AUTO_SPLIT and STICKY descriptions, so a STICKY consumer can
claim ``[0, 65535]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import mmh3

from magnetar_core.domain.errors import MagnetarError

HASH_RANGE_SIZE = 65536
"""Number of sticky key hashes: hashes are ints in ``0..HASH_RANGE_SIZE - 1``."""
MAX_HASH = HASH_RANGE_SIZE - 1
NONE_KEY = b"NONE_KEY"
"""Sticky key of a message with neither an ordering key nor a key (Pulsar's constant)."""

HashRange = tuple[int, int]
"""An inclusive range of hashes ``(start, end)``, ``0 <= start <= end <= 65535``."""


class ConsumerAssignError(MagnetarError):
    """A consumer cannot be added to a Key_Shared selector (Pulsar's ConsumerAssignError)."""

    code = "ConsumerAssignError"
    status = 400


class HashRangeConflict(ConsumerAssignError):
    """A STICKY consumer's ranges overlap ranges another consumer already holds."""

    status = 409


def murmur3_32(data: bytes) -> int:
    """Pulsar's ``Murmur3_32Hash.makeHash``: Murmur3 x86 32-bit, seed 0, sign bit cleared.

    Returns an int in ``0..2**31 - 1``.
    """
    return mmh3.hash(data, 0, signed=True) & 0x7FFFFFFF


def sticky_key(key: str | None, ordering_key: bytes | None = None) -> bytes:
    """The bytes Key_Shared hashes: the ordering key if set (even empty), else the key (UTF-8),
    else ``NONE_KEY``."""
    if ordering_key is not None:
        return bytes(ordering_key)
    if key is not None:
        return key.encode("utf-8")
    return NONE_KEY


def hash_of(data: bytes) -> int:
    """The sticky key hash of ``data``: ``murmur3_32(data) % 65536``, in ``0..65535``."""
    return murmur3_32(data) % HASH_RANGE_SIZE


def sticky_key_hash(key: str | None, ordering_key: bytes | None = None) -> int:
    """The sticky key hash (``0..65535``) of a message with this key and ordering key."""
    return hash_of(sticky_key(key, ordering_key))


def check_hash(h: int) -> int:
    """Return ``h`` if it is a valid sticky key hash; raises ValueError otherwise."""
    if not isinstance(h, int) or isinstance(h, bool) or not 0 <= h <= MAX_HASH:
        raise ValueError(f"sticky key hash must be an int in 0..{MAX_HASH}, got {h!r}")
    return h


def merge_adjacent(ranges: Sequence[HashRange]) -> list[HashRange]:
    """Sort inclusive ranges and join those that touch (``(0, 4), (5, 9)`` -> ``(0, 9)``).

    The ranges must not overlap.
    """
    out: list[HashRange] = []
    for start, end in sorted(ranges):
        if out and out[-1][1] + 1 == start:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


class KeySharedSelector(Protocol):
    """Maps a sticky key hash to one of the connected consumers (a small policy object).

    ``add`` raises ConsumerAssignError (or HashRangeConflict) and leaves the selector unchanged
    when the consumer cannot be added; ``remove`` of an unknown consumer does nothing.
    """

    mode: str

    def add(
        self, consumer_id: str, consumer_name: str, ranges: Sequence[HashRange] | None = None
    ) -> None: ...

    def remove(self, consumer_id: str) -> None: ...

    def select(self, h: int) -> str | None: ...

    def ranges(self) -> dict[str, list[HashRange]]: ...

    def consumers(self) -> list[str]: ...

    def to_dict(self) -> dict[str, Any]: ...
