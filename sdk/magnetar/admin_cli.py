"""``magnetar admin``: pulsar-admin's verbs and flags for clusters, tenants, namespaces and
permissions, over the service's ``/admin/v2`` routes.

    magnetar admin clusters list
    magnetar admin tenants list | get T | delete T [-f]
    magnetar admin tenants create|update T [-r ROLE,...] [-c CLUSTER,...]
    magnetar admin namespaces list T | create T/NS | delete T/NS [-f] | topics T/NS
    magnetar admin namespaces policies T/NS | permissions T/NS
    magnetar admin namespaces grant-permission T/NS --role R --actions produce,consume
    magnetar admin namespaces revoke-permission T/NS --role R
    magnetar admin namespaces grant-subscription-permission T/NS --subscription S --roles R,...
    magnetar admin namespaces revoke-subscription-permission T/NS --subscription S --role R
    magnetar admin namespaces get-backlog-quotas|set-backlog-quota|...|set-subscribe-rate T/NS
                          (see magnetar.admin_quotas_cli)
    magnetar admin topics permissions TOPIC | grant-permission TOPIC --role R --actions A,...
    magnetar admin topics revoke-permission TOPIC --role R
    magnetar admin topics subscriptions|create-subscription|unsubscribe|skip|clear-backlog|
                          expire-messages|reset-cursor|peek-messages|examine-message ...
                          (see magnetar.admin_topics_cli)
    magnetar admin topics terminate|partitioned-terminate|unload|truncate|
                          update-partitioned-topic ... (see magnetar.admin_topic_ops_cli)

As pulsar-admin: lists print one name a line, reads print JSON, changes print nothing; a
tenant created without ``--allowed-clusters`` gets every cluster of the service. Errors
print ``error: <name>: <message>`` on stderr and exit 1. The service URL is found as for
``magnetar produce`` (``--service-url``, ``$MAGNETAR_SERVICE_URL``, the running ``magnetar
local``, ``http://127.0.0.1:8080``), the token too (``--auth-params``, ``$MAGNETAR_AUTH_TOKEN``,
the running ``magnetar local --auth``'s token file).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from magnetar import admin_quotas_cli, admin_topic_ops_cli, admin_topics_cli
from magnetar._service_url import AUTH_PARAMS_HELP, ServiceUrl, auth_token, resolve_service_url
from magnetar._topics import parse_topic

Call = Callable[..., Any]


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _q(text: str) -> str:
    """One path segment, percent-encoded (roles may hold ``/`` and ``:``)."""
    return quote(text, safe="")


def _namespace(text: str) -> str:
    """``tenant/namespace`` as a path (``tenant/namespace`` segments encoded)."""
    tenant, sep, namespace = text.partition("/")
    if not sep or not tenant or not namespace or "/" in namespace:
        raise ValueError(f"a namespace is tenant/namespace, not {text!r}")
    return f"{_q(tenant)}/{_q(namespace)}"


def _topic(text: str) -> str:
    return parse_topic(text).path()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="magnetar admin", description="pulsar-admin's verbs")
    p.add_argument("--service-url", help="HTTP URL of the Magnetar API")
    p.add_argument("--auth-params", help=AUTH_PARAMS_HELP)
    kinds = p.add_subparsers(dest="kind", required=True)

    clusters = kinds.add_parser("clusters", help="the service's cluster").add_subparsers(dest="verb", required=True)  # fmt: skip
    clusters.add_parser("list")

    tenants = kinds.add_parser("tenants", help="tenants").add_subparsers(dest="verb", required=True)  # fmt: skip
    tenants.add_parser("list")
    for verb in ("create", "update"):
        t = tenants.add_parser(verb)
        t.add_argument("tenant")
        t.add_argument("-r", "--admin-roles", default="", help="comma-separated admin roles")
        t.add_argument("-c", "--allowed-clusters", default="",
                       help="comma-separated clusters (default: every cluster)")  # fmt: skip
    tenants.add_parser("get").add_argument("tenant")
    delete = tenants.add_parser("delete")
    delete.add_argument("tenant")
    delete.add_argument("-f", "--force", action="store_true", help="with its namespaces")

    ns = kinds.add_parser("namespaces", help="namespaces and their permissions").add_subparsers(dest="verb", required=True)  # fmt: skip
    ns.add_parser("list").add_argument("tenant")
    admin_quotas_cli.add_verbs(ns)
    for verb in ("create", "topics", "policies", "permissions"):
        ns.add_parser(verb).add_argument("namespace")
    delete = ns.add_parser("delete")
    delete.add_argument("namespace")
    delete.add_argument("-f", "--force", action="store_true", help="with its topics")
    grant = ns.add_parser("grant-permission")
    grant.add_argument("namespace")
    grant.add_argument("--role", required=True)
    grant.add_argument("--actions", required=True, help="e.g. produce,consume")
    revoke = ns.add_parser("revoke-permission")
    revoke.add_argument("namespace")
    revoke.add_argument("--role", required=True)
    grant = ns.add_parser("grant-subscription-permission")
    grant.add_argument("namespace")
    grant.add_argument("--subscription", required=True)
    grant.add_argument("--roles", required=True, help="comma-separated roles")
    revoke = ns.add_parser("revoke-subscription-permission")
    revoke.add_argument("namespace")
    revoke.add_argument("--subscription", required=True)
    revoke.add_argument("--role", required=True)

    topics = kinds.add_parser("topics", help="topic permissions, subscriptions and messages").add_subparsers(dest="verb", required=True)  # fmt: skip
    admin_topics_cli.add_verbs(topics)
    admin_topic_ops_cli.add_verbs(topics)
    topics.add_parser("permissions").add_argument("topic")
    grant = topics.add_parser("grant-permission")
    grant.add_argument("topic")
    grant.add_argument("--role", required=True)
    grant.add_argument("--actions", required=True)
    revoke = topics.add_parser("revoke-permission")
    revoke.add_argument("topic")
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
        path = f"{ns}/{_namespace(args.namespace)}"
        return {
            "create": lambda: ("PUT", path, None),
            "delete": lambda: ("DELETE", path + _force(args), None),
            "topics": lambda: ("GET", path + "/topics", None),
            "policies": lambda: ("GET", path, None),
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
    if answer is None:
        return
    if isinstance(answer, list) and all(isinstance(a, str) for a in answer):
        for name in answer:
            print(name)
        return
    print(json.dumps(answer, indent=2, sort_keys=True))


def run(
    args: argparse.Namespace,
    service: ServiceUrl,
    token: str | None = None,
    make_request: Callable[[Call], tuple[str, str, Any]] | None = None,
) -> int:
    """Send the command's request (``make_request(call)``; default ``_request(args, call)``)
    to ``service`` (with ``token``, a token or ``file:///`` URL, when given) and print the
    answer; returns 0. Raises what the SDK's transport raises (PulsarException),
    ValueError for a bad name."""
    import magnetar
    from magnetar._http import Transport

    auth = magnetar.AuthenticationToken(token) if token else None
    transport = Transport(service.url, authentication=auth)
    try:

        def call(method: str, path: str, body: Any = None) -> Any:
            return transport.call(method, path, json_body=body)

        if make_request is None and args.kind == "topics" and args.verb in admin_topics_cli.VERBS:
            answer = admin_topics_cli.run(args, call, transport.call_raw)
            if answer is not None:
                print(answer)
            return 0
        if make_request is None and args.kind == "topics" and args.verb in admin_topic_ops_cli.VERBS:  # fmt: skip
            answer = admin_topic_ops_cli.run(args, call)
            if answer is not None:
                print(answer)
            return 0
        if make_request is None and args.kind == "namespaces" and args.verb in admin_quotas_cli.VERBS:  # fmt: skip
            _print(admin_quotas_cli.run(args, call))
            return 0
        method, path, body = (make_request or (lambda c: _request(args, c)))(call)
        _print(call(method, path, body))
    finally:
        transport.close()
    return 0


def main(argv: Sequence[str]) -> int:
    """``magnetar admin ...``; returns the exit status (1: the service refused, 2: usage)."""
    return serve(_parser().parse_args(list(argv)))


def serve(
    args: argparse.Namespace, make_request: Callable[[Call], tuple[str, str, Any]] | None = None
) -> int:
    """Run a parsed command (``--service-url``, ``--auth-params`` and the request
    ``make_request`` builds; default this module's) and print the answer or the error;
    returns the exit status (also for ``magnetar functions``)."""
    service = resolve_service_url(args.service_url)
    import magnetar

    try:
        return run(args, service, auth_token(args.auth_params, service), make_request)
    except (magnetar.PulsarException, ValueError) as e:
        # an admin error name the SDK has no class for (NotFound, Conflict, ...) is an
        # UnknownError whose message starts with that name
        said = str(e) if isinstance(e, magnetar.UnknownError) else f"{type(e).__name__}: {e}"
        print(f"error: {said}", file=sys.stderr)
        if isinstance(e, magnetar.ConnectError):
            print(f"No Magnetar service answers at {service.url} ({service.source}).", file=sys.stderr)  # fmt: skip
        return 1
