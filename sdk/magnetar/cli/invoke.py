"""``magnetar invoke FUNCTION --event FILE``: run a function that AWS services invoke (the
inbound sources' ``IngestFunction``) on an event, through the local stack's Lambda Invoke
API (``magnetar_local.lambda_api``), as ``sam local invoke -e`` does.

    magnetar invoke IngestFunction --event events/inbound/s3_object_created.json
    magnetar invoke IngestFunction --event - --invocation-type Event < event.json

Prints the function's answer (JSON) and exits 0; 1 when the function raised (its error is
printed on stderr) or nothing answers at the service URL; 2 for a bad option, an unreadable
event file or an answer that is not Lambda's (e.g. a service on AWS: use ``aws lambda
invoke`` there).
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from magnetar.cli.service_url import resolve_service_url


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="magnetar invoke",
        description="Invoke a function of the local stack that AWS services invoke on AWS "
        "(e.g. IngestFunction, the inbound sources) with an event, as `sam local invoke`.",
    )
    parser.add_argument("function", help="logical id (IngestFunction), name or ARN")
    parser.add_argument(
        "--event", "-e", required=True, metavar="FILE", help="the event JSON file ('-': stdin)"
    )
    parser.add_argument(
        "--invocation-type",
        choices=("RequestResponse", "Event", "DryRun"),
        default="RequestResponse",
        help="as Lambda's Invoke (default RequestResponse: wait for the answer)",
    )
    parser.add_argument("--service-url", help="the local stack (default: the running one)")
    return parser


def _event(path: str) -> bytes:
    """The event's bytes, checked to be JSON; raises ValueError naming the problem."""
    try:
        data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as error:
        raise ValueError(f"cannot read the event {path}: {error.strerror}") from error
    try:
        json.loads(data)
    except ValueError as error:
        raise ValueError(f"the event {path} is not JSON: {error}") from error
    return data


def run(argv: Sequence[str] | None = None) -> int:
    """Invoke and print the answer; returns the exit status (see the module)."""
    args = build_parser().parse_args(list(argv) if argv is not None else None)
    try:
        body = _event(args.event)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    service = resolve_service_url(args.service_url)
    request = urllib.request.Request(
        f"{service.url.rstrip('/')}/2015-03-31/functions/{quote(args.function, safe='')}/invocations",
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "X-Amz-Invocation-Type": args.invocation_type},
    )
    try:
        with urllib.request.urlopen(request, timeout=900) as response:
            answer, failed = response.read(), response.headers.get("X-Amz-Function-Error")
            status = response.status
    except urllib.error.HTTPError as error:
        kind = error.headers.get("x-amzn-ErrorType")
        text = error.read().decode(errors="replace")
        message = json.loads(text).get("message", text) if kind else text[:300]
        print(f"error: {kind or error.code}: {message}", file=sys.stderr)
        return 1 if kind else 2
    except (urllib.error.URLError, OSError) as error:
        print(
            f"error: nothing answers at {service.url} ({service.source}): {error}", file=sys.stderr
        )
        return 1
    if failed:
        print(f"error: the function raised: {answer.decode(errors='replace')}", file=sys.stderr)
        return 1
    print(answer.decode() if answer else f"({status}: accepted)")
    return 0
