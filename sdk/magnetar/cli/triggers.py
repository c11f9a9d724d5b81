"""``magnetar triggers``: a topic's triggers (push delivery to a Lambda function or a
webhook) over ``/admin/v2/.../triggers``.

    magnetar triggers create TOPIC NAME (--lambda FUNCTION | --webhook URL [--secret S])
                             [--subscription-type Shared|Key_Shared|Failover]
                             [--initial-position Latest|Earliest] [--batch-size N]
                             [--batching-window-ms MS] [--concurrency N]
                             [--retry-min-ms MS --retry-max-ms MS --retry-multiplier X]
                             [--max-redeliver-count N [--dead-letter-topic T]]
                             [--filter JSON] [--output-topic T] [--body FILE]
    magnetar triggers update TOPIC NAME ...   (the same flags: replaces an existing trigger)
    magnetar triggers get|delete TOPIC NAME
    magnetar triggers list TOPIC

``create`` refuses a name that holds a trigger already, ``update`` a name that holds none
(``error: PreconditionFailed: ...``, status 1: the service checks it in the write, with
``If-None-Match: *`` / ``If-Match: *``, so of two creates of one name one fails). ``--body FILE``
sends the file's JSON as the definition (the HTTP API's fields; ``-``: stdin), and flags
given with it override its fields. The answer is the trigger as stored, as JSON. Output,
errors, service URL and token as ``magnetar admin``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from magnetar._topics import parse_topic
from magnetar.cli.admin.names import topic_arg
from magnetar.cli.service_url import AUTH_PARAMS_HELP
from magnetar.cli.tls import add_tls_options

if TYPE_CHECKING:
    from magnetar.cli.admin.command import Request

_FLAGS = {  # flag's dest -> the definition's field
    "subscription_type": "subscriptionType",
    "initial_position": "initialPosition",
    "batch_size": "batchSize",
    "batching_window_ms": "maximumBatchingWindowMs",
    "concurrency": "maximumConcurrency",
    "output_topic": "outputTopic",
}


def parser() -> argparse.ArgumentParser:
    """The ``magnetar triggers`` argument parser."""
    p = argparse.ArgumentParser(prog="magnetar triggers", description="a topic's triggers")
    p.add_argument("--service-url", help="HTTP URL of the Magnetar API")
    p.add_argument("--auth-params", help=AUTH_PARAMS_HELP)
    add_tls_options(p)
    verbs = p.add_subparsers(dest="verb", required=True)
    for verb in ("create", "update"):
        c = verbs.add_parser(verb, help=f"{verb} a trigger")
        c.add_argument("topic", type=topic_arg)
        c.add_argument("name")
        target = c.add_mutually_exclusive_group()
        target.add_argument("--lambda", dest="function", help="a Lambda function's name or ARN")
        target.add_argument("--webhook", help="an https URL the batches are POSTed to")
        c.add_argument("--secret", help="the webhook's HMAC key (signs each request)")
        c.add_argument("--subscription-type", choices=["Shared", "Key_Shared", "Failover"])
        c.add_argument("--initial-position", choices=["Latest", "Earliest"])
        c.add_argument("--batch-size", type=int, help="messages per batch (1..10000)")
        c.add_argument("--batching-window-ms", type=int, help="wait up to MS for a full batch")
        c.add_argument("--concurrency", type=int, help="batches in flight at once (1..1000)")
        c.add_argument("--retry-min-ms", type=int, help="first retry's delay")
        c.add_argument("--retry-max-ms", type=int, help="longest retry delay")
        c.add_argument("--retry-multiplier", type=float, help="delay growth per retry")
        c.add_argument("--max-redeliver-count", type=int, help="retries before the DLQ")
        c.add_argument("--dead-letter-topic", help="needs --max-redeliver-count")
        c.add_argument("--filter", help='a JSON filter, e.g. \'{"key": [{"prefix": "eu-"}]}\'')
        c.add_argument("--output-topic", help="where a function target's results go")
        c.add_argument("--body", metavar="FILE", help="the definition as JSON ('-': stdin)")
    for verb in ("get", "delete"):
        g = verbs.add_parser(verb, help=f"{verb} a trigger")
        g.add_argument("topic", type=topic_arg)
        g.add_argument("name")
    verbs.add_parser("list", help="the topic's triggers").add_argument("topic", type=topic_arg)
    return p


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise ValueError(f"{what} is not JSON: {error}") from None


def definition(args: argparse.Namespace) -> dict[str, Any]:
    """The trigger's definition from ``--body`` and the flags; raises ValueError naming a
    bad flag or file."""
    body: dict[str, Any] = {}
    if args.body:
        try:
            text = sys.stdin.read() if args.body == "-" else Path(args.body).read_text("utf-8")
        except OSError as error:
            raise ValueError(f"--body {args.body}: {error.strerror or error}") from None
        body = _json(text, f"--body {args.body}")
        if not isinstance(body, dict):
            raise ValueError(f"--body {args.body} must hold a JSON object")
    if args.function:
        body["target"] = {"type": "lambda", "function": args.function}
    elif args.webhook:
        body["target"] = {"type": "webhook", "url": args.webhook}
    if args.secret:
        if body.get("target", {}).get("type") != "webhook":
            raise ValueError("--secret is the webhook's: give --webhook URL with it")
        body["target"]["secret"] = args.secret
    if "target" not in body:
        raise ValueError("a trigger needs a target: --lambda FUNCTION or --webhook URL")
    body.update({f: getattr(args, d) for d, f in _FLAGS.items() if getattr(args, d) is not None})
    retry = {"minDelayMs": args.retry_min_ms, "maxDelayMs": args.retry_max_ms,
             "multiplier": args.retry_multiplier}  # fmt: skip
    if any(v is not None for v in retry.values()):
        body["retry"] = {k: v for k, v in retry.items() if v is not None}
    if args.dead_letter_topic is not None and args.max_redeliver_count is None:
        raise ValueError("--dead-letter-topic needs --max-redeliver-count")
    if args.max_redeliver_count is not None:
        dead = {"maxRedeliverCount": args.max_redeliver_count}
        if args.dead_letter_topic:
            dead["deadLetterTopic"] = args.dead_letter_topic
        body["deadLetterPolicy"] = dead
    if args.filter:
        body["filter"] = _json(args.filter, "--filter")
    return body


def request(args: argparse.Namespace) -> Request:
    """The ``(method, path, body[, headers])`` of the command: ``create`` is a PUT with
    ``If-None-Match: *`` and ``update`` one with ``If-Match: *``, so the service refuses a
    taken (or missing) name in the write itself (412 PreconditionFailed) and of two creates
    of one name exactly one succeeds; raises ValueError (usage)."""
    base = f"/admin/v2/{parse_topic(args.topic).path()}/triggers"
    if args.verb == "list":
        return "GET", base, None
    path = f"{base}/{quote(args.name, safe='')}"
    if args.verb in ("get", "delete"):
        return ("GET" if args.verb == "get" else "DELETE"), path, None
    condition = {"If-None-Match": "*"} if args.verb == "create" else {"If-Match": "*"}
    return "PUT", path, definition(args), condition


def main(argv: Sequence[str]) -> int:
    """``magnetar triggers ...``; returns the exit status (1: refused, 2: usage)."""
    from magnetar.cli.admin import command as admin_cli

    args = parser().parse_args(admin_cli.hoist_global_options(argv))
    return admin_cli.serve(args, lambda _call: request(args))
