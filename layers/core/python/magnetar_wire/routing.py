"""Key → partition hashing shared by the SDK's router and the service's HTTP produce path
(so a keyed message lands in the same partition whichever way it is sent)."""

from __future__ import annotations

import mmh3

JAVA_STRING_HASH = "JavaStringHash"
MURMUR3_32_HASH = "Murmur3_32Hash"
HASHING_SCHEMES = (JAVA_STRING_HASH, MURMUR3_32_HASH)

_MASK32 = 0xFFFFFFFF
_INT_MAX = 0x7FFFFFFF


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` (signed 32-bit): ``s[0]*31^(n-1) + ... + s[n-1]`` over UTF-16
    code units (a non-BMP character counts as its two surrogates)."""
    data = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & _MASK32
    return h - (1 << 32) if h & 0x80000000 else h


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit of ``data`` (unsigned), as Pulsar's Murmur3_32Hash."""
    return mmh3.hash(data, seed, signed=False)


def partition_of_key(key: str, partitions: int, scheme: str = JAVA_STRING_HASH) -> int:
    """The partition a keyed message goes to: ``(hash(key) & Integer.MAX_VALUE) % n``.

    Raises ValueError for an unknown ``scheme`` or ``partitions`` < 1.
    """
    if partitions < 1:
        raise ValueError(f"partitions must be at least 1, not {partitions}")
    if scheme == MURMUR3_32_HASH:
        h = murmur3_32(key.encode("utf-8"))
    elif scheme == JAVA_STRING_HASH:
        h = java_string_hash(key)
    else:
        raise ValueError(f"Unknown hashing scheme {scheme!r}: use {' or '.join(HASHING_SCHEMES)}")
    return (h & _INT_MAX) % partitions
