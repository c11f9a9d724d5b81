"""``magnetar admin``'s command: its parser and global options (taken anywhere on the line),
sending a verb's request with the service URL and authentication found, and printing the
answer or the error with pulsar-admin's exit statuses (the verbs: ``magnetar.cli.admin``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from magnetar.authentication import Authentication
from magnetar.cli import tls
from magnetar.cli.admin import (
    namespaces,
    quotas,
    tenancy,
    topic_lifecycle,
    topic_ops,
    topics,
)
from magnetar.cli.admin import output as out
from magnetar.cli.admin.auth import AUTH_PLUGIN_HELP, authentication
from magnetar.cli.service_url import (
    AUTH_PARAMS_HELP,
    ServiceUrl,
    service_for_command,
)
from magnetar.cli.tls import add_tls_options

Call = Callable[..., Any]
Headers = Mapping[str, str] | None
Request = tuple[str, str, Any] | tuple[str, str, Any, Headers]
"""A command's request: method, path, JSON body and, when it has any, its own headers."""


def _parser(kind: str | None = None) -> argparse.ArgumentParser:
    """The command's parser; with ``kind`` (the line's, ``_kind``) only the verbs of
    ``topics``, or only those of the other kinds, are built, the rest listed without their
    verbs: argparse builds a parser per verb, and all ~80 of them cost each call about 8 ms of
    CPU (a topics command 13 -> 5 ms)."""
    p = argparse.ArgumentParser(prog="magnetar admin", description="pulsar-admin's verbs")
    p.add_argument("--service-url", "--admin-url", dest="service_url", help="HTTP URL of the Magnetar API")  # fmt: skip
    p.add_argument("--auth-plugin", help=AUTH_PLUGIN_HELP)
    p.add_argument("--auth-params", help=AUTH_PARAMS_HELP)
    add_tls_options(p)
    kinds = p.add_subparsers(dest="kind", required=True)

    if kind == "topics":  # the other kinds listed, for the help and argparse's choices
        for name in ("clusters", "tenants", "namespaces"):
            kinds.add_parser(name, help=tenancy.KIND_HELP[name])
    else:
        ns = tenancy.add_kinds(kinds)
        namespaces.add_verbs(ns)
        quotas.add_verbs(ns)
    topics_kind = kinds.add_parser("topics", help=tenancy.KIND_HELP["topics"])
    if kind in (None, "topics") or kind not in tenancy.KIND_HELP:
        topic_verbs = topics_kind.add_subparsers(dest="verb", required=True)
        topic_lifecycle.add_verbs(topic_verbs)
        topics.add_verbs(topic_verbs)
        topic_ops.add_verbs(topic_verbs)
        tenancy.add_topic_permissions(topic_verbs)
    return p


def _kind(argv: Sequence[str]) -> str | None:
    """The kind argparse will read from ``argv`` (hoisted): its first item that is neither an
    option nor a global option's value; None when there is none."""
    index = 0
    while index < len(argv):
        item = argv[index]
        if not item.startswith("-"):
            return item
        index += 2 if item in GLOBAL_OPTIONS else 1
    return None


def _print(answer: Any) -> None:
    """``magnetar functions``' answers: names one a line, text as it is (a triggered
    function's result), anything else JSON."""
    if answer is None:
        return
    if isinstance(answer, str):
        print(answer)
        return
    if isinstance(answer, list) and all(isinstance(a, str) for a in answer):
        for name in answer:
            print(name)
        return
    print(out.to_json(answer))


def _verbs(args: argparse.Namespace, call: Call, fetch: Any) -> tuple[bool, str | None]:
    """``(handled, what to print)`` of a verb of the verb modules (not handled: one of
    ``tenancy``'s)."""
    if args.kind == "namespaces" and args.verb in namespaces.VERBS:
        return True, namespaces.run(args, call)
    if args.kind == "namespaces" and args.verb in quotas.VERBS:
        return True, quotas.run(args, call)
    if args.kind != "topics":
        return False, None
    if args.verb in topic_lifecycle.VERBS:
        return True, topic_lifecycle.run(args, call)
    if args.verb in topics.VERBS:
        return True, topics.run(args, call, fetch)
    if args.verb in topic_ops.VERBS:
        return True, topic_ops.run(args, call)
    return False, None


def run(
    args: argparse.Namespace,
    service: ServiceUrl,
    authentication: Authentication | None = None,
    make_request: Callable[[Call], Request] | None = None,
) -> int:
    """Send the command's request (``make_request(call)``; default the verb modules') to ``service`` with ``authentication`` and print the answer (a table,
    or JSON with ``-o json``); returns 0. Raises what the SDK's transport raises
    (PulsarException), ValueError (a usage error), CommandFailed."""
    from magnetar._transport.http import Transport

    cert = authentication._client_cert() if authentication is not None else None
    transport = Transport(service.url, authentication=authentication, verify=tls.verify(args), cert=cert)  # fmt: skip
    try:

        def call(method: str, path: str, body: Any = None, headers: Headers = None) -> Any:
            return transport.call(method, path, json_body=body, headers=headers)

        if make_request is not None:
            _print(call(*make_request(call)))
            return 0
        handled, text = _verbs(args, call, transport.call_raw)
        if not handled:
            method, path, body = tenancy.request(args, call)
            text = out.render(call(method, path, body), getattr(args, "output", "table"))
        if text is not None:
            print(text)
    finally:
        transport.close()
    return 0


GLOBAL_OPTIONS = ("--service-url", "--admin-url", "--auth-plugin", "--auth-params", *tls.VALUE_OPTIONS)  # fmt: skip
"""Options of the whole command, taken anywhere on the line (pulsar-admin's users put them
before the verb, pulsar-client's after it)."""


def hoist_global_options(argv: Sequence[str]) -> list[str]:
    """``argv`` with every ``GLOBAL_OPTIONS`` option (``--opt value`` or ``--opt=value``)
    moved before the verbs, where the parser reads them."""
    front: list[str] = []
    rest: list[str] = []
    items = list(argv)
    index = 0
    while index < len(items):
        item = items[index]
        name = item.split("=", 1)[0]
        if (name in GLOBAL_OPTIONS and "=" in item) or item in tls.FLAG_OPTIONS:
            front.append(item)
        elif item in GLOBAL_OPTIONS and index + 1 < len(items):
            front += items[index : index + 2]
            index += 1
        else:
            rest.append(item)
        index += 1
    return front + rest


def main(argv: Sequence[str]) -> int:
    """``magnetar admin ...``; returns the exit status (1: the service refused or the verb
    failed, 2: usage, also from argparse's SystemExit)."""
    hoisted = hoist_global_options(argv)
    return serve(_parser(_kind(hoisted)).parse_args(hoisted))


def serve(args: argparse.Namespace, make_request: Callable[[Call], Request] | None = None) -> int:
    """Run a parsed command (``--service-url``, ``--auth-plugin``, ``--auth-params`` and the
    request ``make_request`` builds; default the verb modules') and print the answer or the
    error; returns the exit status: 0, 1 (the service refused: Pulsar's error name and
    reason; the verb failed), 2 (a usage error). Also ``magnetar functions``'."""
    service = service_for_command(args.service_url)
    if service is None:
        return 2
    import magnetar

    try:
        auth = authentication(getattr(args, "auth_plugin", None), args.auth_params, service)
        return run(args, service, auth, make_request)
    except magnetar.PulsarException as e:
        # an admin error name the SDK has no class for (NotFound, Conflict, ...) is an
        # UnknownError whose message starts with that name
        said = str(e) if isinstance(e, magnetar.UnknownError) else f"{type(e).__name__}: {e}"
        print(f"error: {said}", file=sys.stderr)
        if isinstance(e, magnetar.ConnectError):
            print(f"No Magnetar service answers at {service.url} ({service.source}).", file=sys.stderr)  # fmt: skip
        return 1
    except out.CommandFailed as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
