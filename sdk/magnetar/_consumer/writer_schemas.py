"""The writer's schema of a received message, for ``AUTO_CONSUME``: each message names the
version its producer registered (``Message.schema_version()``); this fetches that version
from the service's registry (``GET /admin/v2/schemas/{tenant}/{namespace}/{topic}/schema/
{version}``) once per consumer and version, and gives the ``SchemaInfo`` to decode with."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from magnetar import exceptions as exc
from magnetar._topics import parse_topic
from magnetar.schema.schema import SchemaInfo, SchemaType

if TYPE_CHECKING:
    import logging

    from magnetar._transport.http import Transport

__all__ = ["WriterSchemas"]


class WriterSchemas:
    """A consumer's cache of writer schemas by ``(topic, version)``; thread-safe."""

    def __init__(self, transport: Transport, log: logging.Logger) -> None:
        self._t = transport
        self._log = log
        self._known: dict[tuple[str, int], SchemaInfo | None] = {}
        self._lock = threading.Lock()

    def info(self, topic: str, version: int) -> SchemaInfo | None:
        """The ``SchemaInfo`` of ``topic``'s schema ``version``; None when the registry
        cannot give it (deleted, no permission, a service without a registry): the
        message's value is then its bytes. Errors are logged once per version."""
        base = parse_topic(topic).base
        key = (str(base), version)
        with self._lock:
            if key in self._known:
                return self._known[key]
        path = "/admin/v2/schemas/{}/{}/{}/schema/{}".format(
            quote(base.tenant, safe=""), quote(base.namespace, safe=""),
            quote(base.local, safe=""), version)  # fmt: skip
        found: SchemaInfo | None = None
        try:
            found = _info(self._t.call("GET", path))
        except (exc.PulsarException, KeyError, ValueError, TypeError) as err:
            self._log.warning("no writer schema %s of %s for AUTO_CONSUME: %s", version, base, err)
        with self._lock:
            self._known[key] = found
        return found


def _info(body: Any) -> SchemaInfo:
    """A GetSchemaResponse as a ``SchemaInfo``; raises KeyError/ValueError/TypeError."""
    kind = SchemaType[body["type"]]
    return SchemaInfo(kind, kind.name, str(body["data"]), dict(body.get("properties") or {}))
