"""Load the sample API Gateway events of ``events/`` with their placeholders replaced.

Every ``events/<name>.json`` is a payload 2.0 event for ``sam local invoke -e``. Its path names
placeholder values: the topic ``events-demo`` (and ``events-demo-partitioned``), the
subscription ``demo``, the consumer id ``demo-consumer-id``, in the namespace policy
routes the namespace ``events-demo-ns`` and in the tenancy routes the tenant
``events-demo-tenant`` (other samples name tenant ``public``). ``load_event`` swaps them for
real ones so the same samples drive tests against a live stack::

    event = load_event("ack", topic="orders-1a2b", consumer_id=handle["consumerId"])

A replacement applies to ``rawPath``, ``requestContext.http.path`` and ``pathParameters``,
one path parameter at a time (the segments of ``rawPath`` line up with the ``{parameter}``
segments of the ``routeKey``, or of the app's route for a greedy ``ANY /admin/{proxy+}``
event, whose ``proxy`` parameter follows the new path): a value equal to the placeholder is replaced; for ``topic``
also one that starts with ``events-demo-`` (``events-demo-partitioned`` becomes
``orders-1a2b-partitioned``). ``routeKey``, headers and the body are left alone, except for
``ledger``: the samples name ledger ``1``, a service's ledgers are epoch-ms based (never
reused), so ``ledger=`` aims the ``ledgerId`` path parameter and the body's message ids
(``messageIds``, ``ledgerId``) at the topic's ledger (``content-length`` follows).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from magnetar_local.routes import RouteTable
from magnetar_local.served_routes import default_served_routes
from magnetar_local.template import REPO_ROOT

EVENTS_DIR = REPO_ROOT / "events"

#: keyword of ``load_event`` -> the literal value the sample files use.
PLACEHOLDERS = {
    "topic": "events-demo",
    "subscription": "demo",
    "consumer_id": "demo-consumer-id",
    "namespace": "events-demo-ns",
    "tenant": "events-demo-tenant",
    "ledger": "1",
}

# The pathParameters each placeholder may appear in.
_PARAMETERS = {
    "topic": ("topic",),
    "subscription": ("subscription",),
    "consumer_id": ("consumerId",),
    "namespace": ("namespace",),
    "tenant": ("tenant",),
    "ledger": ("ledgerId",),
}


def event_names(directory: Path | str = EVENTS_DIR) -> list[str]:
    """The sample event names (file stems), sorted."""
    return sorted(path.stem for path in Path(directory).glob("*.json"))


def load_event(
    name: str, directory: Path | str = EVENTS_DIR, **replacements: str
) -> dict[str, Any]:
    """Read ``<directory>/<name>.json`` and replace the placeholders named in ``replacements``.

    ``replacements`` keywords are ``topic``, ``subscription``, ``consumer_id``,
    ``namespace`` and ``tenant`` (see
    PLACEHOLDERS). Raises FileNotFoundError for an unknown name and TypeError for an unknown
    keyword. The file is not changed; each call returns a new dict.
    """
    unknown = set(replacements) - set(PLACEHOLDERS)
    if unknown:
        raise TypeError(f"unknown placeholder(s) {sorted(unknown)}; use {sorted(PLACEHOLDERS)}")
    event = json.loads((Path(directory) / f"{name}.json").read_text())
    if not replacements:
        return event
    event = copy.deepcopy(event)
    template = str(event.get("routeKey", "")).partition(" ")[2]
    http = event.get("requestContext", {}).get("http", {})
    greedy = template.endswith("+}")
    if greedy:  # ANY /admin/{proxy+}: the segments line up with the app's route instead
        served = RouteTable(default_served_routes()).match(http["method"], event["rawPath"])
        template = served.route.path if served is not None else template
    event["rawPath"] = _replace_path(event["rawPath"], template, replacements)
    if "path" in http:
        http["path"] = _replace_path(http["path"], template, replacements)
    parameters = event.get("pathParameters") or {}
    for keyword, value in replacements.items():
        for parameter in _PARAMETERS[keyword]:
            if parameter in parameters:
                parameters[parameter] = _replace_value(keyword, parameters[parameter], value)
    if greedy:  # the greedy parameter: the rest of the path, decoded as API Gateway does
        (name, _), = parameters.items()  # fmt: skip
        prefix = str(event["routeKey"]).partition(" ")[2].rsplit("/", 1)[0] + "/"
        parameters[name] = unquote(event["rawPath"][len(prefix) :])
    if "ledger" in replacements and event.get("body") and not event.get("isBase64Encoded"):
        _replace_ledger(event, int(replacements["ledger"]))
    return event


def _replace_ledger(event: dict[str, Any], ledger: int) -> None:
    """Aim the body's message ids of the samples' ledger 1 at ``ledger``."""
    body = json.loads(event["body"])
    if not isinstance(body, dict):
        return
    placeholder = PLACEHOLDERS["ledger"] + ":"
    if isinstance(body.get("messageIds"), list):
        body["messageIds"] = [f"{ledger}:{i[len(placeholder):]}"
                              if isinstance(i, str) and i.startswith(placeholder) else i
                              for i in body["messageIds"]]  # fmt: skip
    if body.get("ledgerId") == int(PLACEHOLDERS["ledger"]):
        body["ledgerId"] = ledger
    event["body"] = json.dumps(body)
    event.setdefault("headers", {})["content-length"] = str(len(event["body"].encode()))


def _replace_value(keyword: str, current: str, value: str) -> str:
    placeholder = PLACEHOLDERS[keyword]
    if current == placeholder:
        return value
    if keyword == "topic" and current.startswith(placeholder + "-"):
        return value + current[len(placeholder) :]
    return current


def _replace_path(path: str, template: str, replacements: dict[str, str]) -> str:
    """Replace the segments of ``path`` that are path parameters of ``template``."""
    segments = path.split("/")
    names = template.split("/")
    if len(names) != len(segments):
        return path
    for index, (segment, name) in enumerate(zip(segments, names, strict=True)):
        if not (name.startswith("{") and name.endswith("}")):
            continue
        for keyword, value in replacements.items():
            if name[1:-1] not in _PARAMETERS[keyword]:
                continue
            replaced = _replace_value(keyword, segment, value)
            if replaced != segment:
                segments[index] = quote(replaced, safe="")
                break
    return "/".join(segments)
