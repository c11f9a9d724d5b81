"""``magnetar admin topics``: pulsar-admin's subscription and message verbs.

    magnetar admin topics subscriptions TOPIC [--output json]
    magnetar admin topics create-subscription TOPIC -s SUB [-m latest|earliest|LEDGER:ENTRY]
    magnetar admin topics unsubscribe TOPIC -s SUB [-f]
    magnetar admin topics skip TOPIC -s SUB -n N
    magnetar admin topics clear-backlog TOPIC -s SUB
    magnetar admin topics expire-messages TOPIC -s SUB -t 10m         (no unit: seconds)
    magnetar admin topics expire-messages-all-subscriptions TOPIC -t 10m
    magnetar admin topics reset-cursor TOPIC -s SUB (-t 10m | --timestamp MS | -m LEDGER:ENTRY [-e])
    magnetar admin topics peek-messages TOPIC -s SUB [-n N] [--output json]
    magnetar admin topics examine-message TOPIC [-i earliest|latest] [-m N] [--output json]

Changes print nothing, as pulsar-admin. Reads print a table for people, or JSON for scripts
with ``-o``/``--output json``. ``reset-cursor -t`` is a time back from now and
``expire-messages -t`` an age: a number and a unit ``s``, ``m``, ``h``, ``d``, ``w`` or ``y``
(no unit: seconds), as pulsar-admin's (``magnetar.cli.admin.units``). ``peek-messages``
prints the first ``-n`` messages of the backlog (a batch counts its messages), fewer when
the backlog is shorter.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from magnetar._topics import parse_topic
from magnetar.cli.admin import output as out
from magnetar.cli.admin.names import topic_arg
from magnetar.cli.admin.units import seconds, seconds_arg
from magnetar.exceptions import PulsarException

Call = Callable[..., Any]
Fetch = Callable[[str, str], tuple[bytes, dict[str, str]]]
ENTRY_CONTENT_TYPE = "application/vnd.magnetar.entry"
LATEST_ID = {"ledgerId": 2**63 - 1, "entryId": 2**63 - 1}
EARLIEST_ID = {"ledgerId": -1, "entryId": -1}


def add_verbs(topics: Any) -> None:
    """Add the verbs to ``magnetar admin topics``' subparsers."""

    def verb(name: str, help_text: str, sub: bool = True) -> argparse.ArgumentParser:
        v: argparse.ArgumentParser = topics.add_parser(name, help=help_text)
        v.add_argument("topic", type=topic_arg)
        if sub:
            v.add_argument("-s", "--subscription", required=True)
        return v

    out.add_output(verb("subscriptions", "list the subscriptions", sub=False))
    verb("create-subscription", "create a subscription").add_argument("-m", "--messageId", default="latest", help="latest, earliest or LEDGER:ENTRY")  # fmt: skip
    verb("unsubscribe", "delete a subscription").add_argument("-f", "--force", action="store_true", help="even with consumers connected")  # fmt: skip
    verb("skip", "skip messages").add_argument("-n", "--count", type=int, required=True)
    verb("clear-backlog", "skip every message")
    age = "messages older than this: 30s, 100m, 3h, 2d, 5w (no unit: seconds)"
    verb("expire-messages", "expire messages older than -t").add_argument("-t", "--expireTime", type=seconds_arg, required=True, help=age)  # fmt: skip
    verb("expire-messages-all-subscriptions", "the same on every subscription", sub=False).add_argument("-t", "--expireTime", type=seconds_arg, required=True, help=age)  # fmt: skip
    reset = verb("reset-cursor", "deliver again from a time or a message id")
    where = reset.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "-t", "--time", type=_relative_arg, help="back from now: 30s, 10m, 2h, 1d, 1w"
    )
    where.add_argument("--timestamp", type=int, help="epoch milliseconds")
    where.add_argument("-m", "--messageId", help="LEDGER:ENTRY[:PARTITION[:BATCH]]")
    reset.add_argument("-e", "--exclude-reset-position", action="store_true")
    peek = verb("peek-messages", "read the first messages of the backlog without consuming")
    peek.add_argument("-n", "--count", type=int, default=1)
    out.add_output(peek)
    examine = verb("examine-message", "read one message from either end of the topic", sub=False)
    examine.add_argument("-i", "--initialPosition", choices=("earliest", "latest"), default="latest")  # fmt: skip
    examine.add_argument("-m", "--messagePosition", type=int, default=1)
    out.add_output(examine)


VERBS = frozenset(
    {
        "subscriptions", "create-subscription", "unsubscribe", "skip", "clear-backlog",
        "expire-messages", "expire-messages-all-subscriptions", "reset-cursor",
        "peek-messages", "examine-message",
    }
)  # fmt: skip


def relative_ms(text: str) -> int:
    """``10m`` as milliseconds (units s, m, h, d, w, y; none: seconds); raises ValueError
    (a negative time too)."""
    value_s = seconds(text)
    if value_s < 0:
        raise ValueError(f"a time back from now may not be negative, not {text!r}")
    return value_s * 1000


def _relative_arg(text: str) -> int:
    """argparse type of ``reset-cursor -t``: milliseconds back from now."""
    try:
        return relative_ms(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def message_id_body(text: str) -> dict[str, int]:
    """``latest``, ``earliest`` or ``LEDGER:ENTRY[:PARTITION[:BATCH]]`` as Pulsar's message
    id body; raises ValueError."""
    if text in ("latest", "earliest"):
        return dict(LATEST_ID if text == "latest" else EARLIEST_ID)
    parts = text.split(":")
    if not 2 <= len(parts) <= 4 or not all(re.fullmatch(r"-?\d+", p) for p in parts):
        raise ValueError(f"a message id is LEDGER:ENTRY[:PARTITION[:BATCH]], not {text!r}")
    numbers = [int(p) for p in parts] + [-1] * (4 - len(parts))
    return dict(zip(("ledgerId", "entryId", "partitionIndex", "batchIndex"), numbers, strict=True))  # fmt: skip


def run(args: argparse.Namespace, call: Call, fetch: Fetch, now_ms: Callable[[], int] | None = None) -> Any:  # fmt: skip
    """Do the verb with ``call`` (JSON requests) and ``fetch`` (raw GETs); returns what to
    print (None: nothing; a str: printed as it is). Raises PulsarException, ValueError."""
    topic = f"/admin/v2/{parse_topic(args.topic).path()}"
    v = args.verb
    sub = f"{topic}/subscription/{quote(args.subscription, safe='')}" if hasattr(args, "subscription") else ""  # fmt: skip
    if v == "subscriptions":
        names = call("GET", f"{topic}/subscriptions")
        return out.render(names, args.output)
    if v in ("peek-messages", "examine-message"):
        rows = _peek(args, fetch, sub) if v == "peek-messages" else _examine(args, fetch, topic)
        return json.dumps(rows, indent=2) if args.output == "json" else _table(rows)
    now = now_ms or (lambda: int(time.time() * 1000))
    method, path, body = {
        "create-subscription": lambda: ("PUT", sub, message_id_body(args.messageId)),
        "unsubscribe": lambda: ("DELETE", sub + ("?force=true" if args.force else ""), None),
        "skip": lambda: ("POST", f"{sub}/skip/{args.count}", None),
        "clear-backlog": lambda: ("POST", f"{sub}/skip_all", None),
        "expire-messages": lambda: ("POST", f"{sub}/expireMessages/{args.expireTime}", None),
        "expire-messages-all-subscriptions": lambda: (
            "POST", f"{topic}/all_subscription/expireMessages/{args.expireTime}", None),
        "reset-cursor": lambda: _reset(args, sub, now),
    }[v]()  # fmt: skip
    call(method, path, body)
    return None


def _reset(args: argparse.Namespace, sub: str, now_ms: Callable[[], int]) -> tuple[str, str, Any]:
    if args.messageId is not None:
        body: dict[str, Any] = message_id_body(args.messageId)
        body["isExcluded"] = bool(args.exclude_reset_position)
        return "POST", f"{sub}/resetcursor", body
    timestamp = args.timestamp if args.timestamp is not None else now_ms() - args.time
    return "POST", f"{sub}/resetcursor/{timestamp}", None


def _peek(args: argparse.Namespace, fetch: Fetch, sub: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    position = 1
    while len(rows) < args.count:
        try:
            body, headers = fetch("GET", f"{sub}/position/{position}")
        except PulsarException as e:
            if "Message not found" in str(e):
                break  # the end of the backlog
            raise
        rows.extend(_messages(body, headers))
        position += 1
    return rows[: args.count]


def _examine(args: argparse.Namespace, fetch: Fetch, topic: str) -> list[dict[str, Any]]:
    query = f"initialPosition={args.initialPosition}&messagePosition={args.messagePosition}"
    return _messages(*fetch("GET", f"{topic}/examinemessage?{query}"))


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"  # fmt: skip


def _messages(body: bytes, headers: dict[str, str]) -> list[dict[str, Any]]:
    """One row per message of a peeked answer (a batch entry: one per message)."""
    message_id = headers.get("x-pulsar-message-id", "")
    if headers.get("content-type", "").startswith(ENTRY_CONTENT_TYPE):
        # the entry codec only here: every other admin verb starts without it
        from magnetar_wire import decode_entry, read_metadata, stored_payload

        meta = read_metadata(body)
        if meta.encryption is not None:  # an encrypted batch: one row, its payload opaque
            first = meta.messages[0]
            return [_row(message_id, _iso(first.publish_time_ms), meta.producer_name,
                         first.key, dict(first.properties), stored_payload(body))]  # fmt: skip
        entry = decode_entry(body)
        return [
            _row(
                f"{message_id}:{i}",
                _iso(m.publish_time_ms),
                entry.producer_name,
                m.key,
                dict(m.properties),
                m.payload,
            )  # fmt: skip
            for i, m in enumerate(entry.messages)
        ]
    properties = json.loads(headers.get("x-pulsar-property") or "{}")
    return [
        _row(
            message_id,
            headers.get("x-pulsar-publish-time", ""),
            headers.get("x-pulsar-producer-name", ""),
            headers.get("x-pulsar-partition-key"),
            properties,
            body,
        )  # fmt: skip
    ]


def _row(message_id: str, publish: str, producer: str, key: str | None, properties: dict, payload: bytes) -> dict[str, Any]:  # fmt: skip
    try:
        text: str | None = payload.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    return {
        "messageId": message_id, "publishTime": publish, "producerName": producer, "key": key,
        "properties": properties, "payload": text,
        "payloadBase64": base64.b64encode(payload).decode(),
    }  # fmt: skip


def _table(rows: list[dict[str, Any]]) -> str | None:
    if not rows:
        return None
    header = ("MESSAGE ID", "PUBLISH TIME", "KEY", "PROPERTIES", "PAYLOAD")
    cells = [
        (r["messageId"], r["publishTime"], r["key"] or "",
         ",".join(f"{k}={v}" for k, v in sorted(r["properties"].items())),
         r["payload"] if r["payload"] is not None else "base64:" + r["payloadBase64"])
        for r in rows
    ]  # fmt: skip
    widths = [max(len(str(row[i])) for row in [header, *cells]) for i in range(len(header) - 1)]
    lines = ["  ".join([*(str(c).ljust(w) for c, w in zip(row[:-1], widths, strict=True)), row[-1]]) for row in [header, *cells]]  # fmt: skip
    return "\n".join(line.rstrip() for line in lines)
