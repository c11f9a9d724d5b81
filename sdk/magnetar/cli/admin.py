"""``magnetar admin``: pulsar-admin's verbs and flags over the service's ``/admin/v2`` routes
(the reference: docs/admin-cli.md).

    magnetar admin [--service-url URL] [--auth-plugin P] [--auth-params X] KIND VERB ...
    magnetar admin clusters list
    magnetar admin tenants list | get T | delete T [-f]
    magnetar admin tenants create|update T [-r ROLE,...] [-c CLUSTER,...]
    magnetar admin namespaces list T | create T/NS | delete T/NS [-f] | topics T/NS
    magnetar admin namespaces permissions T/NS | grant-permission T/NS --role R --actions A,...
    magnetar admin namespaces revoke-permission T/NS --role R
    magnetar admin namespaces grant-subscription-permission T/NS --subscription S --roles R,...
    magnetar admin namespaces revoke-subscription-permission T/NS --subscription S --role R
    magnetar admin namespaces policies|get-retention|set-retention|... (admin_namespaces)
    magnetar admin namespaces get-backlog-quotas|set-backlog-quota|...|set-subscribe-rate T/NS
                          (admin_quotas)
    magnetar admin topics permissions TOPIC | grant-permission TOPIC --role R --actions A,...
    magnetar admin topics revoke-permission TOPIC --role R
    magnetar admin topics list|create|delete|stats|compact|... (admin_topic_lifecycle)
    magnetar admin topics subscriptions|skip|peek-messages|... (admin_topics)
    magnetar admin topics terminate|unload|truncate|... (admin_topic_ops)

Changes print nothing, as pulsar-admin; reads print a table for people (lists one name a
line) or JSON for scripts with ``-o json`` (``magnetar.cli.admin_output``). A tenant created
without ``--allowed-clusters`` gets every cluster of the service. Exit status 1 when the
service refuses (``error: <Pulsar's error name>: <its reason>`` on stderr) or the verb
failed; 2 for a usage error (a malformed name, time or size: nothing is sent). The service
URL is found as for ``magnetar produce`` (``--service-url`` or pulsar-admin's
``--admin-url``, ``$MAGNETAR_SERVICE_URL``, the running ``magnetar local``,
``http://127.0.0.1:8080``), the token too (``magnetar.cli.admin_auth``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

from magnetar._topics import parse_topic
from magnetar.authentication import Authentication
from magnetar.cli import (
    admin_namespaces,
    admin_quotas,
    admin_topic_lifecycle,
    admin_topic_ops,
    admin_topics,
    tls,
)
from magnetar.cli import admin_output as out
from magnetar.cli.admin_auth import AUTH_PLUGIN_HELP, authentication
from magnetar.cli.admin_names import namespace_arg, namespace_path, topic_arg
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


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _q(text: str) -> str:
    """One path segment, percent-encoded (roles may hold ``/`` and ``:``)."""
    return quote(text, safe="")


def _topic(text: str) -> str:
    return parse_topic(text).path()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="magnetar admin", description="pulsar-admin's verbs")
    p.add_argument("--service-url", "--admin-url", dest="service_url", help="HTTP URL of the Magnetar API")  # fmt: skip
    p.add_argument("--auth-plugin", help=AUTH_PLUGIN_HELP)
    p.add_argument("--auth-params", help=AUTH_PARAMS_HELP)
    add_tls_options(p)
    kinds = p.add_subparsers(dest="kind", required=True)

    clusters = kinds.add_parser("clusters", help="the service's cluster").add_subparsers(dest="verb", required=True)  # fmt: skip
    out.add_output(clusters.add_parser("list"))

    tenants = kinds.add_parser("tenants", help="tenants").add_subparsers(dest="verb", required=True)  # fmt: skip
    out.add_output(tenants.add_parser("list"))
    for verb in ("create", "update"):
        t = tenants.add_parser(verb)
        t.add_argument("tenant")
        t.add_argument("-r", "--admin-roles", default="", help="comma-separated admin roles")
        t.add_argument("-c", "--allowed-clusters", default="",
                       help="comma-separated clusters (default: every cluster)")  # fmt: skip
    get = tenants.add_parser("get")
    get.add_argument("tenant")
    out.add_output(get)
    delete = tenants.add_parser("delete")
    delete.add_argument("tenant")
    delete.add_argument("-f", "--force", action="store_true", help="with its namespaces")

    ns = kinds.add_parser("namespaces", help="namespaces, their policies and permissions").add_subparsers(dest="verb", required=True)  # fmt: skip
    listing = ns.add_parser("list")
    listing.add_argument("tenant")
    out.add_output(listing)
    ns.add_parser("create").add_argument("namespace", type=namespace_arg)
    for verb in ("topics", "permissions"):
        read = ns.add_parser(verb)
        read.add_argument("namespace", type=namespace_arg)
        out.add_output(read)
    delete = ns.add_parser("delete")
    delete.add_argument("namespace", type=namespace_arg)
    delete.add_argument("-f", "--force", action="store_true", help="with its topics")
    grant = ns.add_parser("grant-permission")
    grant.add_argument("namespace", type=namespace_arg)
    grant.add_argument("--role", required=True)
    grant.add_argument("--actions", required=True, help="e.g. produce,consume")
    revoke = ns.add_parser("revoke-permission")
    revoke.add_argument("namespace", type=namespace_arg)
    revoke.add_argument("--role", required=True)
    grant = ns.add_parser("grant-subscription-permission")
    grant.add_argument("namespace", type=namespace_arg)
    grant.add_argument("--subscription", required=True)
    grant.add_argument("--roles", required=True, help="comma-separated roles")
    revoke = ns.add_parser("revoke-subscription-permission")
    revoke.add_argument("namespace", type=namespace_arg)
    revoke.add_argument("--subscription", required=True)
    revoke.add_argument("--role", required=True)
    admin_namespaces.add_verbs(ns)
    admin_quotas.add_verbs(ns)

    topics = kinds.add_parser("topics", help="topics, their subscriptions, messages and permissions").add_subparsers(dest="verb", required=True)  # fmt: skip
    admin_topic_lifecycle.add_verbs(topics)
    admin_topics.add_verbs(topics)
    admin_topic_ops.add_verbs(topics)
    permissions = topics.add_parser("permissions")
    permissions.add_argument("topic", type=topic_arg)
    out.add_output(permissions)
    grant = topics.add_parser("grant-permission")
    grant.add_argument("topic", type=topic_arg)
    grant.add_argument("--role", required=True)
    grant.add_argument("--actions", required=True)
    revoke = topics.add_parser("revoke-permission")
    revoke.add_argument("topic", type=topic_arg)
    revoke.add_argument("--role", required=True)
    return p


def _tenant_body(args: argparse.Namespace, call: Call) -> dict[str, list[str]]:
    clusters = _csv(args.allowed_clusters) or call("GET", "/admin/v2/clusters")
    return {"adminRoles": _csv(args.admin_roles), "allowedClusters": clusters}


def _force(args: argparse.Namespace) -> str:
    return "?force=true" if args.force else ""


def _request(args: argparse.Namespace, call: Call) -> tuple[str, str, Any]:
    """The ``(method, path, body)`` of the command (a tenant body may ask for clusters)."""
    v, tenants, ns = args.verb, "/admin/v2/tenants", "/admin/v2/namespaces"
    if args.kind == "clusters":
        return "GET", "/admin/v2/clusters", None
    if args.kind == "tenants":
        if v == "list":
            return "GET", tenants, None
        path = f"{tenants}/{_q(args.tenant)}"
        if v == "get":
            return "GET", path, None
        if v == "delete":
            return "DELETE", path + _force(args), None
        return ("PUT" if v == "create" else "POST"), path, _tenant_body(args, call)
    if args.kind == "namespaces":
        if v == "list":
            return "GET", f"{ns}/{_q(args.tenant)}", None
        path = namespace_path(args.namespace)
        return {
            "create": lambda: ("PUT", path, None),
            "delete": lambda: ("DELETE", path + _force(args), None),
            "topics": lambda: ("GET", path + "/topics", None),
            "permissions": lambda: ("GET", path + "/permissions", None),
            "grant-permission": lambda: (
                "POST",
                f"{path}/permissions/{_q(args.role)}",
                _csv(args.actions),
            ),  # fmt: skip
            "revoke-permission": lambda: ("DELETE", f"{path}/permissions/{_q(args.role)}", None),
            "grant-subscription-permission": lambda: (
                "POST",
                f"{path}/permissions/subscription/{_q(args.subscription)}",
                _csv(args.roles),
            ),  # fmt: skip
            "revoke-subscription-permission": lambda: (
                "DELETE",
                f"{path}/permissions/{_q(args.subscription)}/{_q(args.role)}",
                None,
            ),  # fmt: skip
        }[v]()
    path = f"/admin/v2/{_topic(args.topic)}/permissions"
    if v == "permissions":
        return "GET", path, None
    if v == "grant-permission":
        return "POST", f"{path}/{_q(args.role)}", _csv(args.actions)
    return "DELETE", f"{path}/{_q(args.role)}", None


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
    """``(handled, what to print)`` of a verb of the verb modules (not handled: this
    module's own)."""
    if args.kind == "namespaces" and args.verb in admin_namespaces.VERBS:
        return True, admin_namespaces.run(args, call)
    if args.kind == "namespaces" and args.verb in admin_quotas.VERBS:
        return True, admin_quotas.run(args, call)
    if args.kind != "topics":
        return False, None
    if args.verb in admin_topic_lifecycle.VERBS:
        return True, admin_topic_lifecycle.run(args, call)
    if args.verb in admin_topics.VERBS:
        return True, admin_topics.run(args, call, fetch)
    if args.verb in admin_topic_ops.VERBS:
        return True, admin_topic_ops.run(args, call)
    return False, None


def run(
    args: argparse.Namespace,
    service: ServiceUrl,
    authentication: Authentication | None = None,
    make_request: Callable[[Call], Request] | None = None,
) -> int:
    """Send the command's request (``make_request(call)``; default this module's verbs and
    its verb modules') to ``service`` with ``authentication`` and print the answer (a table,
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
            method, path, body = _request(args, call)
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
    return serve(_parser().parse_args(hoist_global_options(argv)))


def serve(args: argparse.Namespace, make_request: Callable[[Call], Request] | None = None) -> int:
    """Run a parsed command (``--service-url``, ``--auth-plugin``, ``--auth-params`` and the
    request ``make_request`` builds; default this module's) and print the answer or the
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
