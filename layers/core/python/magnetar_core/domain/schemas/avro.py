"""Avro's schema resolution rules (the Avro specification, "Schema Resolution"): whether
data written with one schema can be read with another. Pulsar checks AVRO and JSON schemas
with them (Avro's ``SchemaValidator``); so does ``compatibility``.

``can_read(reader, writer)`` takes parsed JSON definitions and answers None (compatible) or
why not, in words. Named types (record, enum, fixed) are resolved by full name, then by
short name; recursive types are assumed compatible where they recur. The top-level record's
own name is not compared (Avro's resolving grammar, which Pulsar's check runs, never does:
``User1`` reads data written as ``User2`` when the fields resolve).
"""

from __future__ import annotations

from typing import Any

PRIMITIVES = ("null", "boolean", "int", "long", "float", "double", "bytes", "string")
PROMOTIONS = {
    ("int", "long"), ("int", "float"), ("int", "double"), ("long", "float"),
    ("long", "double"), ("float", "double"), ("string", "bytes"), ("bytes", "string"),
}  # fmt: skip
"""(writer, reader) pairs Avro promotes."""
NAMED = ("record", "error", "enum", "fixed")


def _full_name(schema: dict, namespace: str) -> str:
    name = str(schema.get("name", ""))
    if "." in name:
        return name
    space = schema.get("namespace", namespace) or ""
    return f"{space}.{name}" if space else name


def named_types(schema: Any, namespace: str = "", found: dict | None = None) -> dict[str, dict]:
    """Every named type ``schema`` defines, by full name (and by short name when that is
    unambiguous)."""
    found = {} if found is None else found
    if isinstance(schema, list):
        for branch in schema:
            named_types(branch, namespace, found)
    elif isinstance(schema, dict):
        kind = schema.get("type")
        if kind in NAMED:
            full = _full_name(schema, namespace)
            found[full] = schema
            found.setdefault(full.rsplit(".", 1)[-1], schema)
            namespace = full.rsplit(".", 1)[0] if "." in full else ""
        for field in schema.get("fields", []) if kind in ("record", "error") else []:
            named_types(field.get("type"), namespace, found)
        for key in ("items", "values"):
            if key in schema:
                named_types(schema[key], namespace, found)
        if isinstance(kind, (dict, list)):
            named_types(kind, namespace, found)
    return found


class _Checker:
    def __init__(self, reader: Any, writer: Any) -> None:
        self._names = (named_types(reader), named_types(writer))
        self._seen: set[tuple[int, int]] = set()

    def _resolve(self, schema: Any, side: int) -> Any:
        if isinstance(schema, str) and schema not in PRIMITIVES:
            names = self._names[side]
            return names.get(schema) or names.get(schema.rsplit(".", 1)[-1]) or schema
        if isinstance(schema, dict) and isinstance(schema.get("type"), (str, list, dict)):
            kind = schema["type"]
            if kind not in NAMED and kind not in ("array", "map"):
                return self._resolve(kind, side)  # {"type": "int"}, {"type": "Named"}
        return schema

    def check(self, reader: Any, writer: Any, path: str) -> str | None:
        r, w = self._resolve(reader, 0), self._resolve(writer, 1)
        if isinstance(w, list):
            for branch in w:
                why = self.check(r, branch, path)
                if why:
                    return why
            return None
        if isinstance(r, list):
            if any(self.check(branch, w, path) is None for branch in r):
                return None
            return f"{path}: no branch of the reader's union reads the writer's {_kind(w)}"
        rk, wk = _kind(r), _kind(w)
        if rk != wk:
            if (wk, rk) in PROMOTIONS:
                return None
            return f"{path}: the writer's {wk} cannot be read as {rk}"
        if rk in PRIMITIVES:
            return None
        if rk in NAMED and path and _short(r) != _short(w):
            return f"{path}: the writer's {rk} {_short(w)} is not the reader's {_short(r)}"
        key = (id(r), id(w))
        if key in self._seen:
            return None
        self._seen.add(key)
        return self._complex(rk, r, w, path)

    def _complex(self, kind: str, r: dict, w: dict, path: str) -> str | None:
        if kind == "array":
            return self.check(r["items"], w["items"], path + "[]")
        if kind == "map":
            return self.check(r["values"], w["values"], path + "{}")
        if kind == "fixed":
            return None if r.get("size") == w.get("size") else f"{path}: fixed sizes differ"
        if kind == "enum":
            missing = sorted(set(w.get("symbols", [])) - set(r.get("symbols", [])))
            if missing and "default" not in r:
                return f"{path}: the reader's enum {_short(r)} lacks symbols {missing}"
            return None
        return self._record(r, w, path)

    def _record(self, r: dict, w: dict, path: str) -> str | None:
        written = {f["name"]: f for f in w.get("fields", [])}
        for field in r.get("fields", []):
            names = [field["name"], *field.get("aliases", [])]
            source = next((written[n] for n in names if n in written), None)
            where = f"{path}.{field['name']}" if path else field["name"]
            if source is None:
                if "default" not in field:
                    return f"field {where} is not in the writer's schema and has no default"
                continue
            why = self.check(field["type"], source["type"], where)
            if why:
                return why
        return None


def _kind(schema: Any) -> str:
    if isinstance(schema, str):
        return schema
    if isinstance(schema, dict):
        kind = schema.get("type")
        return "record" if kind == "error" else str(kind)
    return "union"


def _short(schema: dict) -> str:
    return str(schema.get("name", "")).rsplit(".", 1)[-1]


def can_read(reader: Any, writer: Any) -> str | None:
    """None when data written with ``writer`` can be read with ``reader`` (both parsed Avro
    schemas), else why not (the first difference found, with its field path)."""
    return _Checker(reader, writer).check(reader, writer, "")


def check_definition(schema: Any) -> None:
    """Raise ValueError, saying where, unless ``schema`` (parsed JSON) is a well-formed Avro
    schema: primitives, records (named, with named fields), enums (named, string symbols),
    arrays, maps, fixed (named, with a size), unions, and references to named types it
    defines."""
    names = named_types(schema)
    _check(schema, names, "the schema")


def _check(schema: Any, names: dict[str, dict], where: str) -> None:  # noqa: C901
    if isinstance(schema, str):
        if schema not in PRIMITIVES and schema not in names and schema.rsplit(".", 1)[-1] not in names:  # fmt: skip
            raise ValueError(f"{where}: unknown type {schema!r}")
        return
    if isinstance(schema, list):
        for i, branch in enumerate(schema):
            _check(branch, names, f"{where} branch {i}")
        return
    if not isinstance(schema, dict) or "type" not in schema:
        raise ValueError(f"{where}: expected a type name, a union or an object with a type")
    kind = schema["type"]
    if isinstance(kind, (list, dict)) or (isinstance(kind, str) and kind not in (*NAMED, "array", "map")):  # fmt: skip
        _check(kind, names, where)
        return
    if kind in NAMED and not isinstance(schema.get("name"), str):
        raise ValueError(f"{where}: a {kind} needs a name")
    if kind in ("record", "error"):
        fields = schema.get("fields")
        if not isinstance(fields, list):
            raise ValueError(f"{where}: record {schema['name']} needs a list of fields")
        for field in fields:
            if not isinstance(field, dict) or not isinstance(field.get("name"), str) or "type" not in field:  # fmt: skip
                raise ValueError(f"{where}: record {schema['name']} has a field without a name and a type")  # fmt: skip
            aliases = field.get("aliases", [])
            if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
                raise ValueError(f"{where}: field {field['name']}'s aliases must be strings")
            _check(field["type"], names, f"{where}.{field['name']}")
    elif kind == "enum":
        symbols = schema.get("symbols")
        if not isinstance(symbols, list) or not all(isinstance(s, str) for s in symbols):
            raise ValueError(f"{where}: enum {schema['name']} needs a list of string symbols")
    elif kind == "fixed":
        if type(schema.get("size")) is not int:
            raise ValueError(f"{where}: fixed {schema['name']} needs an integer size")
    elif kind in ("array", "map"):
        key = "items" if kind == "array" else "values"
        if key not in schema:
            raise ValueError(f"{where}: an {kind} needs {key}")
        _check(schema[key], names, f"{where}[]")
