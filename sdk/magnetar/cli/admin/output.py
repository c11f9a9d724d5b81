"""How ``magnetar admin`` prints what the service answers: tables for people (aligned
columns, a header in capitals), JSON for scripts (``--output json``).

- a list of names: one a line (``--output json``: a JSON list);
- a mapping of scalars and lists: two columns, ``KEY`` and ``VALUE`` (lists joined by
  commas, nested mappings as compact JSON);
- a list of mappings (``rows``): one row each, the columns named by ``columns``.

Every function returns the text to print, or None when there is nothing to print.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any

OUTPUTS = ("table", "json")


class CommandFailed(Exception):
    """A verb did not do what was asked though the service did not refuse (``magnetar
    admin`` prints ``error: <message>`` and exits 1)."""


def add_output(parser: argparse.ArgumentParser) -> None:
    """Give a verb that returns data ``--output table|json`` (default table)."""
    parser.add_argument(
        "-o", "--output", choices=OUTPUTS, default="table",
        help="table for people (default) or json for scripts",
    )  # fmt: skip


def to_json(data: Any) -> str:
    """``data`` as indented JSON with sorted keys."""
    return json.dumps(data, indent=2, sort_keys=True)


def cell(value: Any) -> str:
    """One table cell: lists joined by commas, mappings as compact JSON, None empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(cell(v) for v in value)
    if isinstance(value, Mapping):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return str(value)


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Aligned columns (two blanks between), the header first; trailing blanks dropped."""
    cells = [list(header), *([cell(v) for v in row] for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells)
    return "\n".join(line.rstrip() for line in lines)


def key_values(data: Mapping[str, Any]) -> str | None:
    """A mapping as ``KEY VALUE`` rows in key order; None when it is empty."""
    if not data:
        return None
    return table(("KEY", "VALUE"), [(k, data[k]) for k in sorted(data)])


def render(data: Any, output: str) -> str | None:
    """What to print for ``data`` in ``output`` (``table`` or ``json``): see the module."""
    if output == "json":
        return to_json(data)
    if data is None:
        return None
    if isinstance(data, list) and all(isinstance(d, str) for d in data):
        return "\n".join(data) or None
    if isinstance(data, Mapping):
        return key_values(data)
    return cell(data)
