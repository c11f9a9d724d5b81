"""``Delegated``: an attribute of an aggregate that lives in one of its parts.

``CursorState`` keeps its records in small part objects (``acks``, ``reads``, ...) and
exposes the names callers always used (``state.mark_delete``, ``state.leases``) through
these descriptors: reading and assigning go to the part, nothing is stored twice.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")


class Delegated(Generic[T]):
    """Read-write access to attribute ``name`` of the part stored at ``part`` (by default
    the attribute has the same name in the part as in the owner)."""

    def __init__(self, part: str, name: str = "") -> None:
        self.part, self.name = part, name

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.name or name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Delegated[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(getattr(obj, self.part), self.name)

    def __set__(self, obj: object, value: T) -> None:
        setattr(getattr(obj, self.part), self.name, value)

    def __repr__(self) -> str:
        return f"Delegated({self.part}.{self.name})"
