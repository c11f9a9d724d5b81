"""``magnetar functions``: pulsar-admin's functions verbs over ``/admin/v3/functions``.

    magnetar functions create --py FILE.py --classname MODULE.Class --inputs T[,T...]
                              [--output T] [--name N] [--tenant T] [--namespace NS]
                              [--user-config JSON] [--subs-position Latest|Earliest]
                              [--max-message-retries N] [--dead-letter-topic T]
                              [--batch-size N]
    magnetar functions update ...   (the same flags: replaces the function, or creates it)
    magnetar functions get|delete --name N [--tenant T] [--namespace NS]   (or --fqfn T/NS/N)
    magnetar functions list [--tenant T] [--namespace NS]
    magnetar functions status|stats|start|stop|restart --name N [--tenant T] [--namespace NS]
    magnetar functions trigger --name N --trigger-value V [--topic T]   (or --trigger-file F)

The tenant and namespace default to ``public`` / ``default``, the name to the class's name
(as pulsar-admin). ``create`` registers (``POST``): as pulsar-admin's, it refuses a name
that holds another function (``error: Conflict: Function ... already exists``), but a rerun
with the very same definition succeeds and changes nothing; ``update`` creates or replaces
(``PUT``; pulsar-admin's refuses a missing function). Both send the file's text with the
definition; the service runs
the function on a trigger of each input (in-process under ``magnetar local``, in the
deployment's function runner Lambda on AWS). ``status`` and ``stats`` print Pulsar's
FunctionStatus and FunctionStats as JSON; ``stop`` pauses the function (its inputs keep
the backlog), ``start`` resumes it, ``restart`` starts it and counts a restart; ``trigger``
produces the value to the input and prints what the function returned on it. Output and errors as ``magnetar admin``
(``error: <name>: <message>`` on stderr, status 1); the service URL and token are found as
for ``magnetar produce``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from magnetar.cli.service_url import AUTH_PARAMS_HELP
from magnetar.cli.tls import add_tls_options

PATH = "/admin/v3/functions"
CONTROL = ("status", "stats", "start", "stop", "restart")


def _names(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tenant", default="public")
    p.add_argument("--namespace", default="default")
    p.add_argument("--name", help="the function's name (create: default the class's name)")
    p.add_argument("--fqfn", help="tenant/namespace/name, instead of the three flags")


def parser() -> argparse.ArgumentParser:
    """The ``magnetar functions`` argument parser."""
    p = argparse.ArgumentParser(prog="magnetar functions", description="pulsar-admin functions")
    p.add_argument("--service-url", help="HTTP URL of the Magnetar API")
    p.add_argument("--auth-params", help=AUTH_PARAMS_HELP)
    add_tls_options(p)
    verbs = p.add_subparsers(dest="verb", required=True)
    for verb in ("create", "update"):
        c = verbs.add_parser(verb, help=f"{verb} a function from a Python file")
        _names(c)
        c.add_argument("--py", required=True, help="the function's .py file")
        c.add_argument("--classname", required=True, help="module.Class (module: the file's name)")
        c.add_argument("--inputs", required=True, help="comma-separated input topics")
        c.add_argument("--output", help="the topic results are published to")
        c.add_argument("--user-config", help="a JSON object (context.get_user_config_value)")
        c.add_argument("--subs-position", choices=["Latest", "Earliest"], default="Latest")
        c.add_argument("--max-message-retries", type=int, help="retries before the DLQ")
        c.add_argument("--dead-letter-topic", help="needs --max-message-retries")
        c.add_argument("--batch-size", type=int, help="messages per invocation (default 1)")
    for verb in ("get", "delete", *CONTROL):
        _names(verbs.add_parser(verb, help=f"{verb} a function"))
    trigger = verbs.add_parser("trigger", help="run the function on a value, print its result")
    _names(trigger)
    value = trigger.add_mutually_exclusive_group(required=True)
    value.add_argument("--trigger-value", help="the value to produce to the input")
    value.add_argument("--trigger-file", help="a file whose text is the value")
    trigger.add_argument("--topic", help="the input to produce to (default: the only one)")
    listing = verbs.add_parser("list", help="the namespace's functions")
    listing.add_argument("--tenant", default="public")
    listing.add_argument("--namespace", default="default")
    return p


def _where(args: argparse.Namespace) -> tuple[str, str, str | None]:
    if getattr(args, "fqfn", None):
        parts = args.fqfn.split("/")
        if len(parts) != 3 or not all(parts):
            raise ValueError(f"--fqfn is tenant/namespace/name, not {args.fqfn!r}")
        return parts[0], parts[1], parts[2]
    return args.tenant, args.namespace, getattr(args, "name", None)


def request(args: argparse.Namespace) -> tuple[str, str, Any]:
    """The ``(method, path, body)`` of the command; raises ValueError naming a bad flag or
    an unreadable file."""
    tenant, namespace, name = _where(args)
    base = f"{PATH}/{quote(tenant, safe='')}/{quote(namespace, safe='')}"
    if args.verb == "list":
        return "GET", base, None
    if args.verb in ("create", "update"):
        name = name or args.classname.rpartition(".")[2]
    if not name:
        raise ValueError(f"`magnetar functions {args.verb}` needs --name or --fqfn")
    path = f"{base}/{quote(name, safe='')}"
    if args.verb == "get":
        return "GET", path, None
    if args.verb == "delete":
        return "DELETE", path, None
    if args.verb in ("status", "stats"):
        return "GET", f"{path}/{args.verb}", None
    if args.verb in CONTROL:
        return "POST", f"{path}/{args.verb}", None
    if args.verb == "trigger":
        return "POST", f"{path}/trigger", _trigger_body(args)
    return ("POST" if args.verb == "create" else "PUT"), path, _body(args)


def _body(args: argparse.Namespace) -> dict[str, Any]:
    try:
        code = Path(args.py).read_text(encoding="utf-8")
    except OSError as error:
        raise ValueError(f"--py {args.py}: {error.strerror or error}") from None
    body: dict[str, Any] = {
        "className": args.classname,
        "code": code,
        "inputs": [t.strip() for t in args.inputs.split(",") if t.strip()],
        "subscriptionPosition": args.subs_position,
    }
    if args.user_config:
        try:
            body["userConfig"] = json.loads(args.user_config)
        except ValueError:
            raise ValueError("--user-config must be a JSON object") from None
    optional = {"output": args.output, "maxMessageRetries": args.max_message_retries,
                "deadLetterTopic": args.dead_letter_topic, "batchSize": args.batch_size}  # fmt: skip
    body.update({k: v for k, v in optional.items() if v is not None})
    return body


def _trigger_body(args: argparse.Namespace) -> dict[str, Any]:
    data = args.trigger_value
    if data is None:
        try:
            data = Path(args.trigger_file).read_text(encoding="utf-8")
        except OSError as error:
            raise ValueError(f"--trigger-file {args.trigger_file}: {error.strerror or error}") from None  # fmt: skip
    body: dict[str, Any] = {"data": data}
    if args.topic:
        body["topic"] = args.topic
    return body


def main(argv: Sequence[str]) -> int:
    """``magnetar functions ...``; returns the exit status (1: refused, 2: usage)."""
    from magnetar.cli.admin import command as admin_cli

    args = parser().parse_args(admin_cli.hoist_global_options(argv))
    return admin_cli.serve(args, lambda _call: request(args))
