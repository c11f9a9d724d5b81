"""``pulsar.schema.definition``: ``Record`` and its complex field types (``Array``, ``Map``,
``CustomEnum``; the primitives live in ``_fields``), as pulsar-client 3.13 defines them.

``Record.schema()`` returns the Avro record definition pulsar-client produces, key for key:
``{"type": "record", "name": <class>, ["namespace": _avro_namespace,] "fields": [...]}``,
each field ``{"name", "type"}`` (or ``{"name", "default", "type"}`` with
``required_default=True``), optional fields typed ``["null", <type>]``, in declaration
order (alphabetical with ``_sorted_fields = True``). A record or enum defined twice in one
definition is referred to by name the second time.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from enum import Enum, EnumMeta
from typing import Any, ClassVar

from ._fields import (
    Boolean,
    Bytes,
    CustomEnum,
    Double,
    Field,
    Float,
    Integer,
    Long,
    Null,
    String,
    type_name,
)

__all__ = [
    "Array", "Boolean", "Bytes", "CustomEnum", "Double", "Field", "Float", "Integer", "Long",
    "Map", "Null", "Record", "String",
]  # fmt: skip

_RESERVED = ("_default", "_required_default", "_required")


def _check_record_or_field(x: Any) -> None:
    """Raises ``Exception("Argument <x> is not a Record or a Field")``."""
    if (type(x) is type and not issubclass(x, Record)) and not isinstance(x, Field):
        raise Exception("Argument " + type_name(x) + " is not a Record or a Field")


class RecordMeta(type):
    """Collects a record class's fields (in declaration order) into ``_fields``."""

    def __new__(mcs, name: str, parents: tuple[type, ...], dct: dict[str, Any]) -> RecordMeta:
        if name != "Record":
            dct["_fields"] = RecordMeta._get_fields(dct)
            dct["_required"] = False
        return type.__new__(mcs, name, parents, dct)

    @classmethod
    def _get_fields(mcs, dct: dict[str, Any]) -> OrderedDict[str, Any]:
        fields: OrderedDict[str, Any] = OrderedDict()
        for name, value in dct.items():
            if isinstance(value, EnumMeta):
                value = CustomEnum(value)  # a Python Enum class as a field
            elif type(value) is RecordMeta:
                value = value()  # a nested record declared by its class
            if isinstance(value, (Record, Field)):
                fields[name] = value
        return fields


class Record(metaclass=RecordMeta):
    """A structured value: subclass it and declare fields as class attributes.

    ``Record(**values)`` validates each value against its field (nested records may be given
    as dicts, arrays and maps of records as lists and dicts of dicts); unset fields take
    their default. Raises ``TypeError`` for a value of the wrong type, ``AttributeError``
    (``Cannot set undeclared field <name> on record``) when an undeclared field is set, and
    ``TypeError`` for ``Record(...)`` itself (it declares no fields; subclass it).
    """

    _avro_namespace: ClassVar[str | None] = None  # the Avro definition's namespace
    _sorted_fields: ClassVar[bool] = False  # fields in alphabetical order in the definition
    _fields: ClassVar[OrderedDict[str, Any]] = OrderedDict()

    def __init__(self, default: Any = None, required_default: bool = False,
                 required: bool = False, *args: Any, **kwargs: Any) -> None:  # fmt: skip
        if type(self) is Record:
            raise TypeError("Record declares no fields: subclass it and declare them")
        self._required_default = required_default
        self._default = default
        self._required = required
        for k, field in self._fields.items():
            if k in kwargs:
                self.__setattr__(k, _from_plain(field, kwargs[k]))
            elif isinstance(field, Record):
                self.__setattr__(k, field)  # the declared sub-record instance
            else:
                super().__setattr__(k, field.default())

    @classmethod
    def schema(cls) -> dict[str, Any]:
        """The Avro definition of this record (a dict, as pulsar-client returns)."""
        return cls.schema_info(set())

    @classmethod
    def schema_info(cls, defined_names: set[str]) -> Any:
        """The definition, or the record's full name if ``defined_names`` already has it."""
        full_name = (cls._avro_namespace + "." if cls._avro_namespace else "") + cls.__name__
        if full_name in defined_names:
            return full_name
        defined_names.add(full_name)
        schema: dict[str, Any] = {"type": "record", "name": str(cls.__name__)}
        if cls._avro_namespace is not None:
            schema["namespace"] = cls._avro_namespace
        schema["fields"] = []
        names = sorted(cls._fields) if cls._sorted_fields else list(cls._fields)
        for name in names:
            field = cls._fields[name]
            inner = field.schema_info(defined_names)
            field_type = inner if field._required else ["null", inner]
            if field.required_default():
                default = field.default()
                default = default.name if isinstance(default, Enum) else default
                schema["fields"].append({"name": name, "default": default, "type": field_type})
            else:
                schema["fields"].append({"name": name, "type": field_type})
        return schema

    def __setattr__(self, key: str, value: Any) -> None:
        if key in _RESERVED:
            super().__setattr__(key, value)
            return
        if key not in self._fields:
            raise AttributeError("Cannot set undeclared field " + key + " on record")
        super().__setattr__(key, self._fields[key].validate_type(key, value))

    def __eq__(self, other: object) -> bool:
        for field in self._fields:
            if getattr(self, field) != getattr(other, field, _MISSING):
                return False
        return True

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __str__(self) -> str:
        return str(self.__dict__)

    def type(self) -> str:
        """The record's class name (its Avro name)."""
        return str(self.__class__.__name__)

    def python_type(self) -> Any:
        """The record's class."""
        return self.__class__

    def validate_type(self, name: str, val: Any) -> Any:
        """As a field of another record: ``val`` must be an instance of this record's class.

        Raises ``TypeError("Invalid type '<type>' for sub-record field '<name>'. Expected: <cls>")``.
        """
        if val is None and not self._required:
            return self.default()
        if not isinstance(val, self.__class__):
            raise TypeError(
                f"Invalid type '{type(val)}' for sub-record field '{name}'. "
                f"Expected: {type_name(self.__class__)}"
            )
        return val

    def default(self) -> Any:
        """The value the field takes when unset: the ``default`` given, else ``None``."""
        return self._default

    def required_default(self) -> bool:
        """Whether the Avro definition carries the ``default``."""
        return self._required_default


_MISSING = object()


def _from_plain(field: Any, value: Any) -> Any:
    """A constructor argument with nested records given as dicts turned into records."""
    if isinstance(field, Record) and isinstance(value, dict):
        return _record_from(field, value)
    if (isinstance(field, Array) and isinstance(field.array_type, Record)
            and isinstance(value, list) and value and isinstance(value[0], dict)):  # fmt: skip
        return [_record_from(field.array_type, item) for item in value]
    if (isinstance(field, Map) and isinstance(field.value_type, Record)
            and isinstance(value, dict) and value
            and isinstance(next(iter(value.values())), dict)):  # fmt: skip
        return {k: _record_from(field.value_type, v) for k, v in value.items()}
    return value


def _record_from(declared: Record, values: dict[str, Any]) -> Record:
    """A copy of the declared sub-record re-initialized with ``values``."""
    made = copy.copy(declared)
    made.__init__(**values)  # type: ignore[misc]
    return made


def _items_schema(item: Any, defined_names: set[str]) -> Any:
    if isinstance(item, (Array, Map, Record)):
        return item.schema_info(defined_names)
    return item.type()


class Array(Field):
    """An Avro ``array`` of ``array_type`` items (a field instance or a record instance).

    Raises ``TypeError("Array field <name> items should all be of type <type>")``.
    """

    def __init__(self, array_type: Any, default: Any = None, required: bool = False,
                 required_default: bool = False) -> None:  # fmt: skip
        _check_record_or_field(array_type)
        self.array_type = array_type
        super().__init__(default=default, required=required, required_default=required_default)

    def type(self) -> str:
        return "array"

    def python_type(self) -> Any:
        return list

    def validate_type(self, name: str, val: Any) -> Any:
        if val is None:
            return None
        super().validate_type(name, val)
        for x in val:
            if not isinstance(x, self.array_type.python_type()):
                raise TypeError("Array field " + name + " items should all be of type "
                                + type_name(self.array_type.type()))  # fmt: skip
        return val

    def schema(self) -> Any:
        return self.schema_info(set())

    def schema_info(self, defined_names: set[str]) -> Any:
        return {"type": "array", "items": _items_schema(self.array_type, defined_names)}


class Map(Field):
    """An Avro ``map`` from ``str`` keys to ``value_type`` values.

    Raises ``TypeError`` (``Map keys for field <name>  should all be strings`` or
    ``Map values for field <name> should all be of type <type>``).
    """

    def __init__(self, value_type: Any, default: Any = None, required: bool = False,
                 required_default: bool = False) -> None:  # fmt: skip
        _check_record_or_field(value_type)
        self.value_type = value_type
        super().__init__(default=default, required=required, required_default=required_default)

    def type(self) -> str:
        return "map"

    def python_type(self) -> Any:
        return dict

    def validate_type(self, name: str, val: Any) -> Any:
        if val is None:
            return None
        super().validate_type(name, val)
        for k, v in val.items():
            if type(k) is not str:
                raise TypeError("Map keys for field " + name + "  should all be strings")
            if not isinstance(v, self.value_type.python_type()):
                raise TypeError("Map values for field " + name + " should all be of type "
                                + type_name(self.value_type.python_type()))  # fmt: skip
        return val

    def schema(self) -> Any:
        return self.schema_info(set())

    def schema_info(self, defined_names: set[str]) -> Any:
        return {"type": "map", "values": _items_schema(self.value_type, defined_names)}
