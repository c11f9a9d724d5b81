"""docs/http-api/permissions.md lists each route's required permission, generated from
``domain.security.routes.ROUTES`` (the table the edge enforces): this test fails when the two
differ and prints the table to paste between the markers."""

from __future__ import annotations

from pathlib import Path

from magnetar_core.domain.security.routes import PUBLIC_ROUTES, ROUTES, RouteClass

DOC = Path(__file__).resolve().parents[2] / "docs" / "http-api" / "permissions.md"
BEGIN = "<!-- permissions: generated from domain/security/routes.py by tests/unit/test_http_api_permissions.py -->"  # noqa: E501
END = "<!-- end of permissions -->"
WHO = {
    RouteClass.SUPERUSER: "superuser",
    RouteClass.ANY_ROLE: "any authenticated role",
    RouteClass.TENANT_ADMIN: "tenant admin (or superuser)",
    RouteClass.LIST_TOPICS: "`produce` or `consume` on the namespace, or tenant admin",
    RouteClass.NAMESPACE_CONSUME: "`consume` on the namespace, or tenant admin",
    RouteClass.LOOKUP: "`produce` or `consume` on the topic or namespace, or tenant admin",
    RouteClass.PRODUCE: "`produce` on the topic or namespace, or tenant admin",
    RouteClass.CONSUME: "`consume` on the topic or namespace, or tenant admin",
    RouteClass.CONSUME_SUBSCRIPTION: (
        "`consume` on the topic or namespace and, when the subscription is restricted, "
        "being one of its roles; or tenant admin"
    ),
    RouteClass.FUNCTIONS: "`functions` on the namespace, or tenant admin",
    RouteClass.NAMESPACE_FUNCTIONS: "`functions` on the namespace, or tenant admin",
}


def permission_table() -> str:
    """The markdown table of every route and who may call it."""
    rows = ["| route | allowed for |", "|---|---|"]
    who = {key: WHO[route.route_class] for key, route in ROUTES.items()}
    who.update(
        {key: "anyone, no token (the console's static files: no data)" for key in PUBLIC_ROUTES}
    )
    for method, path in sorted(who, key=lambda key: (key[1], key[0])):
        rows.append(f"| `{method} {path}` | {who[(method, path)]} |")
    return "\n".join(rows)


def test_the_http_api_doc_lists_the_permission_of_every_route_as_the_edge_enforces_it():
    text = DOC.read_text()
    assert BEGIN in text and END in text, f"add {BEGIN} ... {END} to {DOC}"
    documented = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert documented == permission_table(), "paste this table:\n" + permission_table()


def test_every_route_class_says_who_is_allowed():
    assert set(WHO) == set(RouteClass)
