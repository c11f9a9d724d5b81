"""Message id text form ``ledger:entry:partition:batch`` (e.g. ``1:0:-1:0``), as in Pulsar.

Shared by the SDK and the service so both render and parse ids identically. Every part is an
integer >= -1; -1 means "not applicable" (non-partitioned topic, non-batched entry) or, for
ledger and entry, Pulsar's earliest position (``-1:-1:-1:-1``).
"""

from __future__ import annotations

import re

__all__ = ["format_message_id", "parse_message_id"]

_PART = re.compile(r"-?[0-9]+")
_NAMES = ("ledger_id", "entry_id", "partition", "batch_index")
# Pulsar's types: ledger and entry ids are Java longs, partition and batch index ints.
_MAX = (2**63 - 1, 2**63 - 1, 2**31 - 1, 2**31 - 1)


def _check(name: str, value: int) -> int:
    if type(value) is not int:
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < -1:
        raise ValueError(f"{name} must be >= -1, got {value}")
    return value


def format_message_id(
    ledger_id: int, entry_id: int, partition: int = -1, batch_index: int = -1
) -> str:
    """Render a message id as ``"ledger:entry:partition:batch"``, e.g. ``"1:0:-1:-1"``.

    Raises:
        TypeError: a part is not an int (bool is rejected too).
        ValueError: a part is below -1.
    """
    parts = (ledger_id, entry_id, partition, batch_index)
    return ":".join(str(_check(n, v)) for n, v in zip(_NAMES, parts, strict=True))


def parse_message_id(text: str) -> tuple[int, int, int, int]:
    """Parse ``"l:e:p:b"``, ``"l:e:p"`` or ``"l:e"`` into ``(ledger, entry, partition, batch)``.

    Missing trailing parts are -1. Parts are plain decimal integers (optional leading ``-``);
    no whitespace, no ``+``, no underscores.

    Raises:
        ValueError: empty text, fewer than 2 or more than 4 parts, a part that is not an
            integer, a part below -1, or one beyond its Java type (a long for ledger and
            entry, an int for partition and batch index). The message quotes the input and
            the expected form.
    """
    if not isinstance(text, str):
        raise TypeError(f"message id text must be a str, got {type(text).__name__}")
    hint = "expected 'ledger:entry[:partition[:batch]]' with integers, e.g. '1:0:-1:-1'"
    if not text:
        raise ValueError(f"empty message id; {hint}")
    parts = text.split(":")
    if not 2 <= len(parts) <= 4:
        raise ValueError(f"message id {text!r} has {len(parts)} part(s); {hint}")
    values = []
    for name, part, most in zip(_NAMES, parts, _MAX, strict=False):
        if not _PART.fullmatch(part):
            raise ValueError(f"message id {text!r}: {name} {part!r} is not an integer; {hint}")
        value = int(part) if len(part) <= 20 else most + 1
        if value < -1:
            raise ValueError(f"message id {text!r}: {name} must be >= -1, got {value}")
        if value > most:
            raise ValueError(f"message id {text[:100]!r}: {name} must be at most {most}")
        values.append(value)
    values += [-1] * (4 - len(values))
    return values[0], values[1], values[2], values[3]
