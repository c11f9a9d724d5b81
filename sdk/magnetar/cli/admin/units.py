"""pulsar-admin's time and size arguments, read as pulsar-admin reads them.

A time is an integer and an optional unit (``RelativeTimeUtil``): ``s`` seconds (no unit:
seconds), ``m`` minutes, ``h`` hours, ``d`` days, ``w`` weeks, ``y`` years of 365 days; the
unit's case does not matter (``10M`` is ten minutes). A size is an integer of bytes and an
optional unit ``k``, ``m``, ``g`` or ``t`` (powers of 1024, either case): ``5G`` is
5 * 1024**3 bytes. ``-1`` is "no limit" wherever pulsar-admin says so (retention).

The ``*_arg`` functions are argparse ``type=`` converters: a bad value is a usage error
(argparse prints it and exits with status 2).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

_TIME_UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800, "y": 31_536_000}
_SIZE_UNITS_BYTES = {"k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
_TIME = re.compile(r"(-?\d+)([a-zA-Z]?)")
_SIZE = re.compile(r"(-?\d+)([kKmMgGtT]?)")
BYTES_PER_MB = 1024 * 1024


def seconds(text: str) -> int:
    """``10m`` as 600 (seconds): an integer (may be negative) and an optional unit s, m, h,
    d, w or y. Raises ValueError naming the accepted form."""
    match = _TIME.fullmatch(text.strip())
    unit = match.group(2).lower() if match else ""
    if match is None or (unit and unit not in _TIME_UNITS_S):
        raise ValueError(
            f"a time is a whole number and an optional unit s, m, h, d, w or y (e.g. 30s, "
            f"10m, 1d; no unit: seconds), not {text!r}"
        )
    return int(match.group(1)) * _TIME_UNITS_S[unit or "s"]


def size_bytes(text: str) -> int:
    """``5G`` as 5368709120 (bytes): an integer (may be negative) and an optional unit k,
    m, g or t (powers of 1024). Raises ValueError naming the accepted form."""
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise ValueError(
            f"a size is a whole number of bytes and an optional unit k, m, g or t (e.g. "
            f"4096, 10M, 5G), not {text!r}"
        )
    unit = match.group(2).lower()
    return int(match.group(1)) * (_SIZE_UNITS_BYTES[unit] if unit else 1)


def retention_minutes(text: str) -> int:
    """pulsar-admin's ``set-retention --time`` as ``retentionTimeInMinutes``: -1 stays -1
    (no limit), else whole minutes rounded down (``90s`` is 1). Raises ValueError."""
    value_s = seconds(text)
    return -1 if value_s == -1 else value_s // 60


def retention_mb(text: str) -> int:
    """pulsar-admin's ``set-retention --size`` as ``retentionSizeInMB``: -1 stays -1 (no
    limit), else whole MiB rounded down (``10G`` is 10240, ``4096`` is 0). Raises ValueError."""
    value_bytes = size_bytes(text)
    return -1 if value_bytes == -1 else value_bytes // BYTES_PER_MB


def _arg(convert: Callable[[str], int], name: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            return int(convert(text))
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    parse.__name__ = name
    return parse


def non_negative(convert: Callable[[str], int], what: str) -> Callable[[str], int]:
    """``convert`` refusing a negative result (ValueError naming ``what``)."""

    def check(text: str) -> int:
        value = int(convert(text))
        if value < 0:
            raise ValueError(f"{what} may not be negative, not {text!r}")
        return value

    return check


seconds_arg = _arg(non_negative(seconds, "a time"), "time")
"""A time of at least 0, in seconds (argparse type)."""
milliseconds_arg = _arg(lambda t: non_negative(seconds, "a time")(t) * 1000, "time")
"""A time of at least 0, in milliseconds (argparse type)."""
retention_minutes_arg = _arg(retention_minutes, "time")
retention_mb_arg = _arg(retention_mb, "size")
limit_seconds_arg = _arg(seconds, "time")
"""A time in seconds, -1 for no limit (argparse type: backlog quotas' ``--limitTime``)."""
limit_bytes_arg = _arg(size_bytes, "size")
"""A size in bytes, -1 for no limit (argparse type: backlog quotas' ``--limitSize``)."""
