"""``magnetar admin``'s clusters, tenants, namespaces and permissions verbs (pulsar-admin's):
their arguments and the request each sends.

    magnetar admin clusters list
    magnetar admin tenants list | get T | delete T [-f]
    magnetar admin tenants create|update T [-r ROLE,...] [-c CLUSTER,...]
    magnetar admin namespaces list T | create T/NS | delete T/NS [-f] | topics T/NS
    magnetar admin namespaces permissions T/NS | grant-permission T/NS --role R --actions A,...
    magnetar admin namespaces revoke-permission T/NS --role R
    magnetar admin namespaces grant-subscription-permission T/NS --subscription S --roles R,...
    magnetar admin namespaces revoke-subscription-permission T/NS --subscription S --role R
    magnetar admin topics permissions TOPIC | grant-permission TOPIC --role R --actions A,...
    magnetar admin topics revoke-permission TOPIC --role R

A tenant created without ``--allowed-clusters`` gets every cluster of the service.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from magnetar._topics import parse_topic
from magnetar.cli.admin import output as out
from magnetar.cli.admin.names import namespace_arg, namespace_path, topic_arg

Call = Callable[..., Any]


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _q(text: str) -> str:
    """One path segment, percent-encoded (roles may hold ``/`` and ``:``)."""
    return quote(text, safe="")


def _topic(text: str) -> str:
    return parse_topic(text).path()


KIND_HELP = {
    "clusters": "the service's cluster",
    "tenants": "tenants",
    "namespaces": "namespaces, their policies and permissions",
    "topics": "topics, their subscriptions, messages and permissions",
}
"""The kinds of ``magnetar admin`` and their help, in the order of its help."""


def add_kinds(kinds: Any) -> Any:
    """The ``clusters`` and ``tenants`` kinds and the ``namespaces`` kind with its own
    verbs; returns the namespaces' verbs, for the other modules' verbs."""
    clusters = kinds.add_parser("clusters", help=KIND_HELP["clusters"]).add_subparsers(dest="verb", required=True)  # fmt: skip
    out.add_output(clusters.add_parser("list"))

    tenants = kinds.add_parser("tenants", help=KIND_HELP["tenants"]).add_subparsers(dest="verb", required=True)  # fmt: skip
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

    ns = kinds.add_parser("namespaces", help=KIND_HELP["namespaces"]).add_subparsers(dest="verb", required=True)  # fmt: skip
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
    return ns


def add_topic_permissions(topics: Any) -> None:
    """The ``topics`` verbs of permissions."""
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


def _tenant_body(args: argparse.Namespace, call: Call) -> dict[str, list[str]]:
    clusters = _csv(args.allowed_clusters) or call("GET", "/admin/v2/clusters")
    return {"adminRoles": _csv(args.admin_roles), "allowedClusters": clusters}


def _force(args: argparse.Namespace) -> str:
    return "?force=true" if args.force else ""


def request(args: argparse.Namespace, call: Call) -> tuple[str, str, Any]:
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
