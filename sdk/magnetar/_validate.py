"""Argument checks with pulsar-client's error messages."""

from __future__ import annotations

from typing import Any

__all__ = ["check_type", "check_type_or_none"]


def _type_name(t: type | tuple[type, ...]) -> str:
    if isinstance(t, tuple):
        return " or ".join(x.__name__ for x in t)
    return t.__name__


def check_type(var_type: type | tuple[type, ...], var: Any, name: str) -> None:
    """Raise ``ValueError("Argument X is expected to be of type 'T' and not 'U'")``."""
    if not isinstance(var, var_type):
        raise ValueError(
            f"Argument {name} is expected to be of type '{_type_name(var_type)}' "
            f"and not '{type(var).__name__}'"
        )


def check_type_or_none(var_type: type | tuple[type, ...], var: Any, name: str) -> None:
    """Like ``check_type`` but ``None`` is accepted."""
    if var is not None:
        check_type(var_type, var, name)
