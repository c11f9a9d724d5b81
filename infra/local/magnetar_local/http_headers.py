"""HTTP header blocks parsed without the ``email`` package, into the same message.

The standard library's ``http.client.parse_headers`` (which ``http.server`` uses for every
request it reads, and ``http.client`` for every answer) hands the header block to
``email.parser``: a tenth of moto's server's CPU per request went there. ``parse_headers``
below builds the same ``HTTPMessage`` directly from a block of plain ``Name: value`` lines,
and leaves anything else (folded lines, a bare CR, a name ``email`` would not read as one,
multipart or message content types, a block cut off before its blank line) to the standard
library. ``tests/unit/test_http_headers.py`` compares both on generated blocks.
"""

from __future__ import annotations

import http.client
import re
from typing import Any

_NAME = re.compile(r"[\x21-\x39\x3b-\x7e]+")  # email's header name: printable, no ':'
_ORIGINAL = http.client.parse_headers


def parse_headers(fp: Any, _class: type[http.client.HTTPMessage] = http.client.HTTPMessage) -> Any:
    """``http.client.parse_headers``, with the same answer and errors."""
    lines = http.client._read_headers(fp)  # type: ignore[attr-defined]  # its limits, errors
    fields = _plain_fields(lines)
    if fields is None:
        return _parse_with_email(lines, _class)
    message = _class()
    for name, value in fields:
        message.set_raw(name, value)
    message.set_payload("")
    return message


def _plain_fields(lines: list[bytes]) -> list[tuple[str, str]] | None:
    """``(name, value)`` of each line as ``email``'s compat32 policy reads it, or None when
    the block is not plain ``Name: value`` lines ended by a blank line."""
    if not lines or lines[-1] not in (b"\r\n", b"\n"):
        return None
    fields = []
    for raw in lines[:-1]:
        line = raw.decode("iso-8859-1")
        if line.endswith("\r\n"):
            line = line[:-2]
        elif line.endswith("\n"):
            line = line[:-1]
        else:
            return None
        name, colon, value = line.partition(":")
        if not colon or "\r" in line or "\n" in line or not _NAME.fullmatch(name):
            return None
        value = value.lstrip(" \t")
        if name.lower() == "content-type" and value.lower().startswith(("multipart/", "message/")):
            return None  # email parses the (empty) body as parts
        fields.append((name, value))
    return fields


def _parse_with_email(lines: list[bytes], _class: type[http.client.HTTPMessage]) -> Any:
    import email.parser

    text = b"".join(lines).decode("iso-8859-1")
    return email.parser.Parser(_class=_class).parsestr(text)


def install() -> None:
    """Make ``http.client.parse_headers`` this module's (idempotent; for this process)."""
    http.client.parse_headers = parse_headers  # type: ignore[assignment]
