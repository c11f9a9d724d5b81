"""A Powertools HTTP API resolver whose current event belongs to the thread resolving it.

Powertools keeps the event being resolved in a *class* attribute (``BaseRouter.current_event``,
``BaseRouter.lambda_context``), shared by every resolver of the process. On Lambda a process
runs one invocation at a time, so that is harmless there. The local gateway
(``magnetar_local``) runs many containers — separate loads of the handler modules, each
with its own resolver — in ONE process, concurrently: a request's handler that read its body,
headers or query after another container started resolving read the OTHER request's. A
produce committed one partition's entry under another partition's path (the route arguments
are matched before, the body read after), and an ack or nack settled another consumer's
entries on this consumer's partition (docs/reliability.md, "partition mix-up").
``ThreadResolver`` keeps both per thread, so concurrent containers never see each other's
requests; on Lambda it behaves exactly as Powertools' own resolver.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.utilities.data_classes import APIGatewayProxyEventV2
from aws_lambda_powertools.utilities.data_classes.common import BaseProxyEvent

__all__ = ["ThreadResolver"]


class ThreadResolver(APIGatewayHttpResolver):
    """``APIGatewayHttpResolver`` with ``current_event`` and ``lambda_context`` kept per
    thread (set for the duration of ``resolve``). Reading ``current_event`` outside a
    ``resolve`` of this thread raises ``AttributeError``, as Powertools' does before the
    first event."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._local = threading.local()
        super().__init__(*args, **kwargs)

    @property  # type: ignore[override]
    def current_event(self) -> APIGatewayProxyEventV2:
        event = getattr(self._local, "event", None)
        if event is None:
            raise AttributeError("no event is being resolved on this thread")
        return event

    @current_event.setter
    def current_event(self, value: APIGatewayProxyEventV2) -> None:
        self._local.event = value

    @property
    def lambda_context(self) -> Any:
        return getattr(self._local, "context", None)

    @lambda_context.setter
    def lambda_context(self, value: Any) -> None:
        self._local.context = value

    def resolve(self, event: Mapping[str, Any], context: Any) -> dict[str, Any]:
        """Resolve ``event`` with it as this thread's current event (cleared afterwards)."""
        raw = event.raw_event if isinstance(event, BaseProxyEvent) else event
        self._local.event = self._to_proxy_event(dict(raw))
        self._local.context = context
        try:
            return super().resolve(event, context)
        finally:
            self._local.event = None
            self._local.context = None
