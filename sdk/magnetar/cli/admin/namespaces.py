"""``magnetar admin namespaces``: pulsar-admin's namespace policy verbs.

    magnetar admin namespaces policies T/NS [-o json]
    magnetar admin namespaces get-retention T/NS [-o json]
    magnetar admin namespaces set-retention T/NS --size 5G --time 3d      (-s, -t; -1: no limit)
    magnetar admin namespaces remove-retention T/NS
    magnetar admin namespaces get-message-ttl T/NS [-o json]
    magnetar admin namespaces set-message-ttl T/NS -ttl 1h                (--messageTTL; 0: off)
    magnetar admin namespaces remove-message-ttl T/NS
    magnetar admin namespaces get-deduplication T/NS [-o json]
    magnetar admin namespaces set-deduplication T/NS (--enable | --disable)      (-e, -d)
    magnetar admin namespaces remove-deduplication T/NS
    magnetar admin namespaces get-delayed-delivery T/NS [-o json]
    magnetar admin namespaces set-delayed-delivery T/NS (--enable | --disable) [--time 1s] [--maxDelay 1d]
    magnetar admin namespaces remove-delayed-delivery T/NS
    magnetar admin namespaces get-schema-compatibility-strategy T/NS [-o json]
    magnetar admin namespaces set-schema-compatibility-strategy T/NS -c FULL
    magnetar admin namespaces get-is-allow-auto-update-schema T/NS [-o json]
    magnetar admin namespaces set-is-allow-auto-update-schema T/NS (--enable | --disable)
    magnetar admin namespaces get-schema-validation-enforce T/NS [-o json]
    magnetar admin namespaces set-schema-validation-enforce T/NS (--enable | --disable)
    magnetar admin namespaces clear-backlog T/NS [-s SUB] [--force]
    magnetar admin namespaces unsubscribe T/NS -s SUB

Flags and units are pulsar-admin's (``magnetar.cli.admin.units``): ``set-retention`` turns
``--time`` into whole minutes and ``--size`` into whole MiB as pulsar-admin does;
``set-message-ttl`` takes seconds or a time with a unit; ``set-delayed-delivery --time`` is
the tick (default: the service's), ``--maxDelay`` the longest delay a producer may ask for.
Changes print nothing; reads print a table (or a value) for people, JSON with ``-o json``.
``clear-backlog`` without ``--force`` asks first, as pulsar-admin; not confirmed, it clears
nothing and exits 1. Backlog quotas and rates are ``magnetar.cli.admin.quotas``'s.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from magnetar.cli.admin import output as out
from magnetar.cli.admin import units as units
from magnetar.cli.admin.names import namespace_arg, namespace_path

Call = Callable[..., Any]
Ask = Callable[[str], bool]


class Declined(out.CommandFailed):
    """The user did not confirm a question (``clear-backlog`` without ``--force``)."""


# verb -> (method, path under the namespace, help); reads take -o, sets a body (``_body``)
_GETS = {
    "policies": ("", "the namespace's policies"),
    "get-retention": ("/retention", "retention of acknowledged messages"),
    "get-message-ttl": ("/messageTTL", "message time to live in seconds"),
    "get-deduplication": ("/deduplication", "whether deduplication is on"),
    "get-delayed-delivery": ("/delayedDelivery", "delayed delivery policies"),
    "get-schema-compatibility-strategy": (
        "/schemaCompatibilityStrategy",
        "schema compatibility strategy",
    ),  # fmt: skip
    "get-is-allow-auto-update-schema": (
        "/isAllowAutoUpdateSchema",
        "whether producers may register schema versions",
    ),  # fmt: skip
    "get-schema-validation-enforce": (
        "/schemaValidationEnforced",
        "whether producers without a schema are refused",
    ),  # fmt: skip
}
_REMOVES = {
    "remove-retention": "/retention",
    "remove-message-ttl": "/messageTTL",
    "remove-deduplication": "/deduplication",
    "remove-delayed-delivery": "/delayedDelivery",
}
_SETS = {
    "set-retention": ("POST", "/retention"),
    "set-message-ttl": ("POST", "/messageTTL"),
    "set-deduplication": ("POST", "/deduplication"),
    "set-delayed-delivery": ("POST", "/delayedDelivery"),
    "set-schema-compatibility-strategy": ("PUT", "/schemaCompatibilityStrategy"),
    "set-is-allow-auto-update-schema": ("POST", "/isAllowAutoUpdateSchema"),
    "set-schema-validation-enforce": ("POST", "/schemaValidationEnforced"),
}
VERBS = frozenset({*_GETS, *_REMOVES, *_SETS, "clear-backlog", "unsubscribe"})


def _switch(p: argparse.ArgumentParser) -> None:
    on_off = p.add_mutually_exclusive_group(required=True)
    on_off.add_argument("-e", "--enable", action="store_true", help="turn it on")
    on_off.add_argument("-d", "--disable", action="store_true", help="turn it off")


def add_verbs(ns: Any) -> None:
    """Add the verbs to ``magnetar admin namespaces``' subparsers."""

    def verb(name: str, help_text: str) -> argparse.ArgumentParser:
        v: argparse.ArgumentParser = ns.add_parser(name, help=help_text)
        v.add_argument("namespace", type=namespace_arg, help="tenant/namespace")
        return v

    for name, (_path, help_text) in _GETS.items():
        out.add_output(verb(name, help_text))
    for name in _REMOVES:
        verb(name, f"remove the namespace's setting ({name[7:]}): back to the default")
    retention = verb("set-retention", "keep acknowledged messages for a time or size")
    retention.add_argument("-s", "--size", type=units.retention_mb_arg, required=True,
                           help="e.g. 4096, 10M, 5G, 1T (bytes; -1: no limit; 0 with -t 0: none)")  # fmt: skip
    retention.add_argument("-t", "--time", type=units.retention_minutes_arg, required=True,
                           help="e.g. 100m, 3h, 2d, 5w (no unit: seconds; -1: no limit)")  # fmt: skip
    verb("set-message-ttl", "expire unacknowledged messages after a time").add_argument(
        "-ttl", "--messageTTL", type=units.seconds_arg, required=True,
        help="seconds, or a time like 100m, 3h, 2d (0: messages never expire)",
    )  # fmt: skip
    _switch(verb("set-deduplication", "turn deduplication on or off"))
    delayed = verb("set-delayed-delivery", "turn delayed delivery on or off")
    _switch(delayed)
    delayed.add_argument("-t", "--time", type=units.milliseconds_arg,
                         help="the tick, e.g. 1s, 10s, 1m (default: the service's)")  # fmt: skip
    delayed.add_argument("-md", "--maxDelay", type=units.milliseconds_arg,
                         help="the longest delay a producer may ask, e.g. 1d (0: no limit)")  # fmt: skip
    verb("set-schema-compatibility-strategy", "how new schema versions must relate").add_argument(
        "-c", "--compatibility", required=True,
        help="FULL, BACKWARD, FORWARD, *_TRANSITIVE, ALWAYS_COMPATIBLE, ALWAYS_INCOMPATIBLE, UNDEFINED",
    )  # fmt: skip
    _switch(verb("set-is-allow-auto-update-schema", "may producers register schema versions"))
    _switch(verb("set-schema-validation-enforce", "refuse producers without a schema"))
    clear = verb("clear-backlog", "skip every message of the namespace's subscriptions")
    clear.add_argument("-s", "--sub", help="only this subscription (default: every one)")
    clear.add_argument("-force", "--force", action="store_true", help="do not ask first")
    verb("unsubscribe", "delete a subscription on every topic of the namespace").add_argument(
        "-s", "--sub", required=True
    )


def _body(args: argparse.Namespace) -> Any:
    v = args.verb
    if v == "set-retention":
        return {"retentionTimeInMinutes": args.time, "retentionSizeInMB": args.size}
    if v == "set-message-ttl":
        return args.messageTTL
    if v == "set-schema-compatibility-strategy":
        return args.compatibility
    if v == "set-delayed-delivery":
        body: dict[str, Any] = {"active": bool(args.enable)}
        if args.time is not None:
            body["tickTime"] = args.time
        if args.maxDelay is not None:
            body["maxDeliveryDelayInMillis"] = args.maxDelay
        return body
    return bool(args.enable)  # the on/off verbs


def ask_on_stdin(question: str) -> bool:
    """Ask ``question`` on stderr; True when the answer read from stdin starts with y."""
    print(f"{question} (y/n)", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    return answer.strip().lower().startswith("y")


def run(args: argparse.Namespace, call: Call, ask: Ask = ask_on_stdin) -> str | None:
    """Do the verb with ``call`` (JSON requests); returns what to print (None: nothing).
    Raises PulsarException (the service refused), Declined (``clear-backlog`` not
    confirmed)."""
    v, path = args.verb, namespace_path(args.namespace)
    if v in _GETS:
        return out.render(call("GET", path + _GETS[v][0]), args.output)
    if v in _REMOVES:
        call("DELETE", path + _REMOVES[v])
        return None
    if v in _SETS:
        method, suffix = _SETS[v]
        call(method, path + suffix, _body(args))
        return None
    sub = quote(args.sub, safe="") if args.sub else None
    if v == "unsubscribe":
        call("POST", f"{path}/unsubscribe/{sub}")
        return None
    if not args.force and not ask(f"Clear the backlog of {args.namespace}?"):
        raise Declined("not cleared (answer y, or give --force to skip the question)")
    call("POST", f"{path}/clearBacklog" + (f"/{sub}" if sub else ""))
    return None
