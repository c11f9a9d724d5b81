"""The moto server process of the embedded stack, with DynamoDB's and S3's writes atomic.

Real DynamoDB applies a conditional write atomically: of two concurrent ``PutItem`` calls
with ``attribute_not_exists(pk)`` on one key, exactly one wins. moto's server handles
requests on threads and checks a condition, then stores, with nothing in between held: two
threads can both pass the check and the second write silently replaces the first. The
engine's commit protocol (a conditional put at head + 1 is the commit point) then reports
one entry id to two producers and loses a message. Serialising every write operation of
the DynamoDB and S3 backends behind one lock restores the guarantee the engine relies on;
reads stay concurrent.

AWS STS answers presigned calls (IAM tokens: a GetCallerIdentity URL signed in its query
string); moto's server picks a service from the ``Authorization`` header alone and sends such
a call to S3. ``route_presigned_sts`` routes a query-signed request by the scope of its
``X-Amz-Credential`` when that scope is STS's, as AWS's STS endpoint receives it.

Which backend serves a host is looked up once per host (``cache_backend_lookup``).

Cheaper, with the same answers (profiled under the test suite): DynamoDB's attribute values
written straight to JSON (``serialize_attribute_values_directly``: a third of the server's
CPU per request went to moto's generic serializer), a handler's actions listed once
(``cache_action_names``), Batch's and EC2's models loaded only when used
(``defer_batch_models``: a CPU-second per emulator), connections kept alive (``moto_keepalive``).

With ``--data-dir DIR`` (first) the backends' state is kept in ``DIR`` (``durable``):
restored before the server answers, every write journaled before it is answered;
``--no-fsync`` after it skips the flushes (a killed process loses nothing; a machine crash
may).

Run as ``python -m magnetar_local.moto_boot [--data-dir DIR [--no-fsync]] -H HOST -p PORT``
(moto.server's arguments after ours).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

DYNAMODB_WRITES = (
    "put_item",
    "update_item",
    "delete_item",
    "transact_write_items",
    "batch_write_item",
)
S3_WRITES = ("put_object", "copy_object", "delete_object")


def _serialised(method: Callable[..., Any], lock: threading.RLock) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        with lock:
            return method(*args, **kwargs)

    return call


def make_writes_atomic() -> threading.RLock:
    """Wrap the write operations of moto's DynamoDB and S3 backends in one lock; returns
    it. Idempotent (a wrapped method is not wrapped again)."""
    from moto.dynamodb.models import DynamoDBBackend
    from moto.s3.models import S3Backend

    lock = threading.RLock()
    for backend, names in ((DynamoDBBackend, DYNAMODB_WRITES), (S3Backend, S3_WRITES)):
        for name in names:
            method = getattr(backend, name, None)
            if method is None or getattr(method, "__magnetar_atomic__", False):
                continue
            wrapped = _serialised(method, lock)
            wrapped.__magnetar_atomic__ = True  # type: ignore[attr-defined]
            setattr(backend, name, wrapped)
    return lock


def sts_host_of_query(query: str) -> str | None:
    """``sts.<region>.amazonaws.com`` when ``query`` is signed (``X-Amz-Credential``) with an
    STS scope (``<key>/<date>/<region>/sts/aws4_request``), else None."""
    credential = parse_qs(query).get("X-Amz-Credential", [""])[0].split("/")
    if len(credential) == 5 and credential[3] == "sts" and credential[2]:
        return f"sts.{credential[2]}.amazonaws.com"
    return None


def route_presigned_sts() -> None:
    """Make moto's server send query-signed STS calls to STS (idempotent)."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    original = DomainDispatcherApplication.infer_service_region_host
    if getattr(original, "__magnetar_sts__", False):
        return

    def infer(self: Any, environ: dict[str, Any], path: str) -> str | None:
        if not environ.get("HTTP_AUTHORIZATION"):
            host = sts_host_of_query(environ.get("QUERY_STRING", ""))
            if host is not None:
                return host
        return original(self, environ, path)

    infer.__magnetar_sts__ = True  # type: ignore[attr-defined]
    DomainDispatcherApplication.infer_service_region_host = infer  # type: ignore[method-assign]


def cache_backend_lookup() -> None:
    """Remember which backend serves a host (idempotent). moto's server matches every
    request's host against the URL patterns of all its backends, under one lock, twice for a
    host like ``127.0.0.1:PORT`` that none matches (the service is then read from the
    request): a profile of the test suite's emulator put a tenth of its CPU there. The
    answer depends on the host alone (the patterns are fixed), so it is cached per host."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    original = DomainDispatcherApplication.get_backend_for_host
    if getattr(original, "__magnetar_cached__", False):
        return
    found: dict[str | None, Any] = {}

    def lookup(self: Any, host: str | None) -> Any:
        if host not in found:
            found[host] = original(self, host)
        return found[host]

    lookup.__magnetar_cached__ = True  # type: ignore[attr-defined]
    DomainDispatcherApplication.get_backend_for_host = lookup  # type: ignore[method-assign]


ATTRIBUTE_TYPES = ("S", "N", "B", "SS", "NS", "BS", "M", "L", "NULL", "BOOL")
"""The members of DynamoDB's ``AttributeValue``, in the order of its service model."""
_TYPES = frozenset(ATTRIBUTE_TYPES)


class _Unusual(Exception):
    """A value the direct serializer leaves to moto's own (not a plain attribute value)."""


def _text(value: Any) -> str:
    if type(value) is str:
        return value
    raise _Unusual


def attribute_value_json(value: Any, base64: Callable[[Any], str]) -> dict[str, Any]:
    """What moto's JSON serializer makes of a DynamoDB attribute value that is a plain dict
    of its members (``{"S": "x"}``, ``{"M": {...}}``, bytes in ``B``): members in model
    order, None members left out, blobs through ``base64`` (the serializer's own). Raises
    _Unusual for anything else (moto's serializer then handles it)."""
    if type(value) is not dict or not value.keys() <= _TYPES:
        raise _Unusual
    out: dict[str, Any] = {}
    for name in ATTRIBUTE_TYPES:
        member = value.get(name)
        if member is None:
            continue
        if name in ("S", "N"):
            out[name] = _text(member)
        elif name == "B":
            out[name] = base64(_blob(member))
        elif name in ("SS", "NS"):
            out[name] = [_text(item) for item in _list(member)]
        elif name == "BS":
            out[name] = [base64(_blob(item)) for item in _list(member)]
        elif name == "M":
            if type(member) is not dict or "" in member:  # moto inlines a value named ""
                raise _Unusual
            out[name] = {
                key: attribute_value_json(item, base64)
                for key, item in member.items()
                if item is not None
            }
        elif name == "L":
            out[name] = [
                None if item is None else attribute_value_json(item, base64)
                for item in _list(member)
            ]
        elif type(member) is bool:
            out[name] = member
        else:
            raise _Unusual
    return out


def _blob(value: Any) -> Any:
    if type(value) in (bytes, str):
        return value
    raise _Unusual


def _list(value: Any) -> list[Any]:
    if type(value) is list:
        return value
    raise _Unusual


def serialize_attribute_values_directly() -> None:
    """Serialize DynamoDB's attribute values with ``attribute_value_json`` (idempotent).

    moto's JSON serializer walks the service model for every value, and for each of the ten
    members of an ``AttributeValue`` asks six alias rules where the member's value lies in
    the Python object: most of a GetItem's or Query's CPU in the server. For a plain dict (all
    moto's DynamoDB answers hold) the answer is the dict itself with blobs in base64; anything
    else, and any answer with response transformers, still goes through moto's serializer.
    tests/unit/test_moto_speedups.py compares both on generated values."""
    from moto.core.serialize import BaseJSONSerializer

    original = BaseJSONSerializer._serialize_type_structure
    if getattr(original, "__magnetar_direct__", False):
        return

    def structure(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        if (
            key
            and shape.name == "AttributeValue"
            and self.service_model.service_name == "dynamodb"
            and not getattr(self._value_picker, "response_transformers", None)
        ):
            try:
                direct = attribute_value_json(value, self._base64)
            except _Unusual:
                pass
            else:
                self._default_serialize(serialized, direct, shape, key)
                return
        original(self, serialized, value, shape, key)

    structure.__magnetar_direct__ = True  # type: ignore[attr-defined]
    structure.__wrapped__ = original  # type: ignore[attr-defined]
    BaseJSONSerializer._serialize_type_structure = structure  # type: ignore[method-assign]


def cache_action_names() -> None:
    """List a moto response class's action methods once per class (idempotent): moto ran
    ``inspect.getmembers`` over the class on every request to check the action exists."""
    from moto.core import responses

    original = responses.method_names_from_class
    if getattr(original, "__magnetar_cached__", False):
        return
    cached = functools.cache(original)
    cached.__magnetar_cached__ = True  # type: ignore[attr-defined]
    responses.method_names_from_class = cached


def defer_batch_models() -> None:
    """Make ``moto.batch`` a package whose models load at their first use (idempotent; a
    no-op once something imported it). Its ``__init__`` imports the models, and they import
    all of moto's EC2 (a CPU-second); Step Functions' task factory only needs
    ``moto.batch.utils.JobStatus``. The server's Batch backend still loads on the first
    Batch request (``moto.batch.batch_backends`` reads through to the models)."""
    if "moto.batch" in sys.modules:
        return
    spec = importlib.util.find_spec("moto.batch")
    if spec is None or spec.loader is None:
        return
    package = importlib.util.module_from_spec(spec)  # its __init__ is not run

    def models_attribute(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        models = importlib.import_module("moto.batch.models")
        if name in package.__dict__:  # a submodule the import just set
            return package.__dict__[name]
        return getattr(models, name)

    package.__getattr__ = models_attribute  # type: ignore[method-assign]
    sys.modules["moto.batch"] = package
    import moto

    moto.batch = package


def main(argv: list[str]) -> None:
    """Start moto's server with atomic writes, presigned STS calls routed and the cheaper
    paths above; werkzeug's per-request lines silenced (warnings and errors still reach the
    log). With ``--data-dir DIR`` the state is restored from and kept in DIR first."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    defer_batch_models()  # before anything imports moto.batch
    lock = make_writes_atomic()
    if argv[:1] == ["--data-dir"]:
        from magnetar_local.durable import start

        fsync = argv[2:3] != ["--no-fsync"]
        start(argv[1], lock, fsync=fsync)
        argv = argv[2 if fsync else 3 :]
    route_presigned_sts()
    cache_backend_lookup()
    serialize_attribute_values_directly()
    cache_action_names()
    from magnetar_local.moto_keepalive import serve

    serve(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
