"""The HTTP API as a function's role: the function runner's only way to the outside world.

``FunctionApi`` is both ports user code reaches through ``context``: its counters and state
(``ports.FunctionStateAccess``: ``/admin/v3/functions/{tenant}/{namespace}/{name}/state/
{key}`` and ``.../counters/{key}``) and its outputs (``ports.FunctionOutputs``: the produce
route, ``?deduplicate=true``, with the SDK's binary entry). Every request carries the batch's
token (``Authorization: Bearer``; none when authentication is off), so the service's guard
allows exactly what the function's role may. A refusal or failure raises
``FunctionApiError`` with the service's error name, status and message: the record fails
and is retried, and the message is in the function's log.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from magnetar_wire.errors import MagnetarError
from magnetar_wire.names import TopicName
from magnetar_wire.routing import JAVA_STRING_HASH, partition_of_key

ENTRY_CONTENT_TYPE = "application/vnd.magnetar.entry"
TIMEOUT_S = 15.0


class FunctionApiError(MagnetarError):
    """The HTTP API refused or failed a function's call (its error name and status)."""

    def __init__(self, code: str, status: int, message: str) -> None:
        super().__init__(message)
        self.code, self.status = code, status


Opener = Callable[..., Any]


class FunctionApi:
    """Calls of function ``fqfn`` on the API at ``base_url`` with ``token``."""

    def __init__(
        self,
        base_url: str,
        fqfn: str,
        token: str | None,
        opener: Opener = urllib.request.urlopen,
        timeout_s: float = TIMEOUT_S,
    ) -> None:
        self._base = base_url.rstrip("/")
        self._function = "/admin/v3/functions/" + "/".join(quote(p, safe="") for p in fqfn.split("/"))  # fmt: skip
        self._token = token
        self._open = opener
        self._timeout_s = timeout_s
        self._partitions: dict[str, int] = {}

    # -- ports.FunctionStateAccess (the fqfn is this API's own) ----------------------------

    def incr_counter(self, fqfn: str, key: str, amount: int) -> int:
        answer = self._call("POST", self._key("counters", key), {"amount": amount})
        return int(answer["numberValue"])

    def get_counter(self, fqfn: str, key: str) -> int:
        return int(self._call("GET", self._key("counters", key))["numberValue"])

    def del_counter(self, fqfn: str, key: str) -> None:
        self._call("DELETE", self._key("counters", key))

    def put_state(self, fqfn: str, key: str, value: bytes) -> None:
        body = {"key": key, "byteValue": base64.b64encode(value).decode()}
        self._call("POST", self._key("state", key), body)

    def get_state(self, fqfn: str, key: str) -> bytes | None:
        try:
            answer = self._call("GET", self._key("state", key))
        except FunctionApiError as error:
            if error.status == 404 and error.code == "NotFound":
                return None
            raise
        return base64.b64decode(answer.get("byteValue") or "")

    # -- ports.FunctionOutputs --------------------------------------------------------------

    def publish(self, topic: TopicName, entry: bytes, route_by: str | None) -> None:
        if route_by is not None and topic.partition_index < 0:
            partitions = self._partition_count(topic)
            if partitions > 0:
                topic = topic.partition(partition_of_key(route_by, partitions, JAVA_STRING_HASH))
        path = f"/v1/{_topic_path(topic)}/messages?deduplicate=true"
        self._call("POST", path, entry, ENTRY_CONTENT_TYPE)

    def _partition_count(self, topic: TopicName) -> int:
        if str(topic) not in self._partitions:
            try:
                answer = self._call("GET", f"/admin/v2/{_topic_path(topic)}/partitions")
            except FunctionApiError as error:
                if error.code != "TopicNotFound":
                    raise
                answer = {}  # not yet: producing creates it, non-partitioned
            self._partitions[str(topic)] = int(answer.get("partitions") or 0)
        return self._partitions[str(topic)]

    # -- HTTP ---------------------------------------------------------------------------------

    def _key(self, kind: str, key: str) -> str:
        return f"{self._function}/{kind}/{quote(key, safe='')}"

    def _call(
        self, method: str, path: str, body: object = None, content_type: str = "application/json"
    ) -> dict[str, Any]:
        data = None
        headers = {"Accept": "application/json"}
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        request = urllib.request.Request(self._base + path, data, headers, method=method)
        try:
            with self._open(request, timeout=self._timeout_s) as response:
                text = response.read()
        except urllib.error.HTTPError as error:
            raise _refusal(method, path, error.code, error.read()) from None
        except (urllib.error.URLError, OSError) as error:
            raise FunctionApiError("ServiceUnitNotReady", 503, f"{method} {path}: the API is unreachable ({error})") from None  # fmt: skip
        return json.loads(text) if text.strip() else {}


def _topic_path(topic: TopicName) -> str:
    return "/".join(quote(p, safe="") for p in (topic.domain, topic.tenant, topic.namespace, topic.local))  # fmt: skip


def _refusal(method: str, path: str, status: int, body: bytes) -> FunctionApiError:
    try:
        doc = json.loads(body)
    except ValueError:
        doc = {}
    doc = doc if isinstance(doc, dict) else {}
    code = str(doc.get("error") or ("AuthenticationError" if status == 401 else "UnknownError"))
    reason = str(doc.get("message") or body[:200].decode("utf-8", "replace"))
    return FunctionApiError(
        code, status, f"{method} {path.split('?')[0]}: {status} {code}: {reason}"
    )
