"""Multi-entry produce requests: several entries in one body (``application/vnd.magnetar.entries``).

The body is a sequence of frames, each a 4-byte big-endian unsigned length followed by that
many bytes: one whole entry (docs/entry-format.md) per frame, in commit order. There is no
count and no trailer: the body ends after the last frame. Shared by the SDK (which builds the
body) and the service (which splits it); docs/http-api/producing.md ("Several entries in one request") describes the request.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

__all__ = [
    "ENTRIES_CONTENT_TYPE",
    "FRAME_HEADER_BYTES",
    "MAX_ENTRIES_PER_REQUEST",
    "MAX_REQUEST_BYTES",
    "FrameError",
    "decode_frames",
    "encode_frames",
    "framed_size",
]

ENTRIES_CONTENT_TYPE = "application/vnd.magnetar.entries"
FRAME_HEADER_BYTES = 4
MAX_ENTRIES_PER_REQUEST = 100
"""Entries per request: each is committed on its own (two AWS requests, tens of ms on AWS),
so a full request stays seconds below the 30 s of API Gateway's integration timeout."""
MAX_REQUEST_BYTES = 4 * 1024 * 1024
"""Bytes of a whole body, frame headers included: base64-encoded by API Gateway (4/3) it
stays under Lambda's 6 MB synchronous payload with room for the rest of the event."""

_LENGTH = struct.Struct(">I")


class FrameError(ValueError):
    """The body is not a valid sequence of entry frames, or exceeds a request limit."""


def framed_size(entry_bytes: int) -> int:
    """The bytes one entry of ``entry_bytes`` adds to a body (its frame header included)."""
    return FRAME_HEADER_BYTES + entry_bytes


def encode_frames(entries: Sequence[bytes]) -> bytes:
    """One body holding ``entries`` in order; raises FrameError for an empty entry (a
    frame of length 0 is malformed) or one of 4 GiB or more."""
    parts: list[bytes] = []
    for entry in entries:
        if not entry:
            raise FrameError("an entry frame cannot be empty")
        if len(entry) >= 1 << 32:
            raise FrameError(f"an entry of {len(entry)} bytes does not fit a frame")
        parts += (_LENGTH.pack(len(entry)), entry)
    return b"".join(parts)


def decode_frames(
    body: bytes,
    max_entries: int = MAX_ENTRIES_PER_REQUEST,
    max_bytes: int = MAX_REQUEST_BYTES,
) -> list[bytes]:
    """The entries of ``body`` in order.

    Raises:
        FrameError: the body is empty, longer than ``max_bytes``, holds more than
            ``max_entries`` frames, a frame of length 0, or a frame cut short (the message
            says which frame and at which byte offset).
    """
    if not body:
        raise FrameError("the body holds no entry frame")
    if len(body) > max_bytes:
        raise FrameError(
            f"the body is {len(body)} bytes; a multi-entry request holds at most {max_bytes} "
            "bytes: send fewer entries per request, or a large entry on its own"
        )
    view = memoryview(body)
    entries: list[bytes] = []
    offset = 0
    while offset < len(body):
        index = len(entries)
        if index == max_entries:
            raise FrameError(
                f"the body holds more than {max_entries} entries, the most one request may "
                "carry: send the rest in another request"
            )
        if len(body) - offset < FRAME_HEADER_BYTES:
            raise FrameError(
                f"frame {index} at byte {offset}: {len(body) - offset} bytes left, fewer than "
                f"its {FRAME_HEADER_BYTES}-byte length"
            )
        (length,) = _LENGTH.unpack_from(view, offset)
        start = offset + FRAME_HEADER_BYTES
        if length == 0:
            raise FrameError(f"frame {index} at byte {offset} has length 0: an entry is needed")
        if start + length > len(body):
            raise FrameError(
                f"frame {index} at byte {offset} declares {length} bytes, only "
                f"{len(body) - start} follow"
            )
        entries.append(bytes(view[start : start + length]))
        offset = start + length
    return entries
