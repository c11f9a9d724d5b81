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

With ``--data-dir DIR`` (first) the backends' state is kept in ``DIR`` (``durable``):
restored before the server answers, every write journaled before it is answered;
``--no-fsync`` after it skips the flushes (a killed process loses nothing; a machine crash
may).

Run as ``python -m magnetar_local.moto_boot [--data-dir DIR [--no-fsync]] -H HOST -p PORT``
(moto.server's arguments after ours).
"""

from __future__ import annotations

import functools
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


def main(argv: list[str]) -> None:
    """Start moto's server with atomic writes and presigned STS calls routed; werkzeug's
    per-request lines silenced (warnings and errors still reach the log). With
    ``--data-dir DIR`` the state is restored from and kept in DIR first."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    lock = make_writes_atomic()
    if argv[:1] == ["--data-dir"]:
        from magnetar_local.durable import start

        fsync = argv[2:3] != ["--no-fsync"]
        start(argv[1], lock, fsync=fsync)
        argv = argv[2 if fsync else 3 :]
    route_presigned_sts()
    cache_backend_lookup()
    from moto.server import main as moto_main

    moto_main(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
