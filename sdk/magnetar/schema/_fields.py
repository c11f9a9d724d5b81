"""The primitive field types of a ``Record`` (``pulsar.schema.definition``'s ``Field``, its
Avro primitives and ``CustomEnum``), with pulsar-client 3.13's defaults and error messages.

A field is declared as a class attribute of a ``Record``: ``count = Integer(default=0)``.
``required=True`` makes its Avro type the bare type instead of ``["null", type]``;
``required_default=True`` writes its ``default`` into the Avro definition.
"""

from __future__ import annotations

from abc import abstractmethod
from enum import Enum
from typing import Any

__all__ = [
    "Boolean", "Bytes", "CustomEnum", "Double", "Field", "Float", "Integer", "Long", "Null",
    "String",
]  # fmt: skip


def type_name(x: Any) -> str:
    """``x.__name__`` if it has one (a class), else ``str(x)`` (pulsar-client's wording)."""
    if isinstance(x, tuple):  # several accepted Python types: name the first, the canonical one
        x = x[0]
    return x.__name__ if hasattr(x, "__name__") else str(x)


class Field:
    """Base of every field type.

    Raises (at declaration): ``TypeError`` when ``default`` does not match the field's type.
    """

    def __init__(self, default: Any = None, required: bool = False,
                 required_default: bool = False) -> None:  # fmt: skip
        if default is not None:
            default = self.validate_type("default", default)
        self._default = default
        self._required_default = required_default
        self._required = required

    @abstractmethod
    def type(self) -> Any:
        """The Avro type name (``"int"``, ``"string"``, ...)."""

    @abstractmethod
    def python_type(self) -> Any:
        """The Python type (or tuple of types) a value must have."""

    def validate_type(self, name: str, val: Any) -> Any:
        """Return ``val`` (``default()`` for ``None`` on an optional field).

        Raises:
            TypeError: ``Invalid type '<type>' for field '<name>'. Expected: <type>``.
        """
        if val is None and not self._required:
            return self.default()
        if not isinstance(val, self.python_type()):
            raise TypeError(
                f"Invalid type '{type(val)}' for field '{name}'. "
                f"Expected: {type_name(self.python_type())}"
            )
        return val

    def schema(self) -> Any:
        """The field's Avro type (a name for primitives)."""
        return self.type()

    def schema_info(self, defined_names: set[str]) -> Any:
        """The Avro type inside a record definition; ``defined_names`` avoids redefinitions."""
        return self.type()

    def default(self) -> Any:
        """The value an unset field takes."""
        return self._default

    def required_default(self) -> bool:
        """Whether the Avro definition carries the ``default``."""
        return self._required_default


class Null(Field):
    """Avro ``null``: the only value is ``None``."""

    def type(self) -> str:
        return "null"

    def python_type(self) -> Any:
        return type(None)

    def validate_type(self, name: str, val: Any) -> Any:
        """Raises ``TypeError("Field <name> is set to be None")`` for anything but ``None``."""
        if val is not None:
            raise TypeError("Field " + name + " is set to be None")
        return val


class Boolean(Field):
    """Avro ``boolean``; an unset field is ``False``."""

    def type(self) -> str:
        return "boolean"

    def python_type(self) -> Any:
        return bool

    def default(self) -> Any:
        return self._default if self._default is not None else False


class Integer(Field):
    """Avro ``int`` (32 bits)."""

    def type(self) -> str:
        return "int"

    def python_type(self) -> Any:
        return int


class Long(Field):
    """Avro ``long`` (64 bits)."""

    def type(self) -> str:
        return "long"

    def python_type(self) -> Any:
        return int


class Float(Field):
    """Avro ``float``; ``int`` values are accepted too."""

    def type(self) -> str:
        return "float"

    def python_type(self) -> Any:
        return float, int


class Double(Field):
    """Avro ``double``; ``int`` values are accepted too."""

    def type(self) -> str:
        return "double"

    def python_type(self) -> Any:
        return float, int


class Bytes(Field):
    """Avro ``bytes``; a ``str`` value is stored UTF-8 encoded."""

    def type(self) -> str:
        return "bytes"

    def python_type(self) -> Any:
        return bytes, str

    def validate_type(self, name: str, val: Any) -> Any:
        if isinstance(val, str):
            return val.encode()
        return super().validate_type(name, val)


class String(Field):
    """Avro ``string``; a ``bytes`` value is stored UTF-8 decoded."""

    def type(self) -> str:
        return "string"

    def python_type(self) -> Any:
        return str, bytes

    def validate_type(self, name: str, val: Any) -> Any:
        """Raises ``TypeError("Invalid type '<type>' for field '<name>'. Expected a string")``."""
        if val is None and not self._required:
            return self.default()
        if not isinstance(val, (str, bytes)):
            raise TypeError(f"Invalid type '{type(val)}' for field '{name}'. Expected a string")
        return val.decode() if isinstance(val, bytes) else val


class CustomEnum(Field):
    """An Avro ``enum`` from a Python ``Enum`` class (a bare ``Enum`` class attribute of a
    record is wrapped in one). Values may be members, member names or member values.

    Raises ``Exception("<cls> is not a valid Enum type")`` for a class that is not an Enum.
    """

    def __init__(self, enum_type: Any, default: Any = None, required: bool = False,
                 required_default: bool = False) -> None:  # fmt: skip
        if not (isinstance(enum_type, type) and issubclass(enum_type, Enum)):
            raise Exception(type_name(enum_type) + " is not a valid Enum type")
        self.enum_type = enum_type
        self.values = {m.value: m for m in enum_type.__members__.values()}
        super().__init__(default, required, required_default)

    def type(self) -> str:
        return "enum"

    def python_type(self) -> Any:
        return self.enum_type

    def validate_type(self, name: str, val: Any) -> Any:
        """A member from itself, its name (str) or its value (int).

        Raises ``TypeError("Invalid enum value '<v>' for field '<name>'. Expected: <keys>")``.
        """
        if val is None:
            return None
        if type(val) is str:
            if val in self.enum_type.__members__:
                return self.enum_type.__members__[val]
            raise TypeError(f"Invalid enum value '{val}' for field '{name}'. "
                            f"Expected: {self.enum_type.__members__.keys()}")  # fmt: skip
        if type(val) is int:
            if val in self.values:
                return self.values[val]
            raise TypeError(f"Invalid enum value '{val}' for field '{name}'. "
                            f"Expected: {self.values.keys()}")  # fmt: skip
        if not isinstance(val, self.enum_type):
            raise TypeError(f"Invalid type '{type(val)}' for field '{name}'. "
                            f"Expected: {type_name(self.enum_type)}")  # fmt: skip
        return val

    def schema(self) -> Any:
        return self.schema_info(set())

    def schema_info(self, defined_names: set[str]) -> Any:
        name = self.enum_type.__name__
        if name in defined_names:
            return name
        defined_names.add(name)
        return {"type": "enum", "name": name, "symbols": [m.name for m in self.enum_type]}
