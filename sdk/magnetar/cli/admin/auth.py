"""``magnetar admin``'s ``--auth-plugin`` and ``--auth-params``, as pulsar-admin's.

- token (the default; ``org.apache.pulsar.client.impl.auth.AuthenticationToken``,
  ``AuthenticationToken`` or ``token``): ``--auth-params`` is ``token:<token>``,
  ``file:///path`` or the token itself; without it ``$MAGNETAR_AUTH_TOKEN``, else the running
  ``magnetar local --auth``'s token file (``magnetar.cli.service_url.auth_token``), else none.
- IAM (``AuthenticationAws``, ``magnetar.AuthenticationAws`` or ``aws``): ``--auth-params``
  is a JSON object of ``AuthenticationAws``' arguments (``cluster``, ``region``,
  ``profile``, ``endpoint_url``), or nothing for its defaults.
- Basic (``org.apache.pulsar.client.impl.auth.AuthenticationBasic``, ``AuthenticationBasic``
  or ``basic``): ``--auth-params`` is pulsar-admin's ``{"userId": ..., "password": ...}``.
- TLS (``org.apache.pulsar.client.impl.auth.AuthenticationTls``, ``AuthenticationTLS`` or
  ``tls``): ``--auth-params`` is ``tlsCertFile:/path,tlsKeyFile:/path`` or the same as a
  JSON object; the certificate is presented in the handshake (``client_cert``).
"""

from __future__ import annotations

import json

from magnetar.authentication import (
    Authentication,
    AuthenticationBasic,
    AuthenticationTLS,
    AuthenticationToken,
)
from magnetar.cli.service_url import ServiceUrl, auth_token

TOKEN_PLUGINS = ("org.apache.pulsar.client.impl.auth.AuthenticationToken", "AuthenticationToken", "token")  # fmt: skip
AWS_PLUGINS = ("AuthenticationAws", "magnetar.AuthenticationAws", "aws")
AWS_PARAMS = ("cluster", "region", "profile", "endpoint_url")
BASIC_PLUGINS = ("org.apache.pulsar.client.impl.auth.AuthenticationBasic", "AuthenticationBasic", "basic")  # fmt: skip
TLS_PLUGINS = ("org.apache.pulsar.client.impl.auth.AuthenticationTls", "AuthenticationTls", "AuthenticationTLS", "tls")  # fmt: skip
AUTH_PLUGIN_HELP = (
    "AuthenticationToken (default), AuthenticationBasic (--auth-params "
    '\'{"userId": "u", "password": "p"}\'), AuthenticationTls (--auth-params '
    "tlsCertFile:/c.pem,tlsKeyFile:/k.pem) or AuthenticationAws (IAM; --auth-params a JSON "
    "object of its arguments)"
)


def authentication(plugin: str | None, params: str | None, service: ServiceUrl) -> Authentication | None:  # fmt: skip
    """The authentication to send to ``service`` (None: none). Raises ValueError: an
    unknown plugin or malformed IAM parameters (a usage error)."""
    if plugin is None or plugin in TOKEN_PLUGINS:
        token = auth_token(params, service)
        return AuthenticationToken(token) if token else None
    if plugin in AWS_PLUGINS:
        from magnetar.authentication_aws import AuthenticationAws

        aws = _aws_params(params)
        return AuthenticationAws(
            cluster=aws.get("cluster", "magnetar"), region=aws.get("region"),
            profile=aws.get("profile"), endpoint_url=aws.get("endpoint_url"),
        )  # fmt: skip
    if plugin in BASIC_PLUGINS:
        user = _named_params(params, ("userId", "password"), plugin)
        return AuthenticationBasic(user["userId"], user["password"])
    if plugin in TLS_PLUGINS:
        files = _named_params(params, ("tlsCertFile", "tlsKeyFile"), plugin)
        return AuthenticationTLS(files["tlsCertFile"], files["tlsKeyFile"])
    known = TOKEN_PLUGINS + BASIC_PLUGINS + TLS_PLUGINS + AWS_PLUGINS
    raise ValueError(f"--auth-plugin {plugin!r} is not one of {', '.join(known)}")


def _named_params(params: str | None, names: tuple[str, str], plugin: str) -> dict[str, str]:
    """``names`` of ``--auth-params``: a JSON object, or pulsar-admin's ``k1:v1,k2:v2``.
    Raises ValueError naming what is missing."""
    text = (params or "").strip()
    parsed: object = None
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
    elif text:
        pairs = [part.split(":", 1) for part in text.split(",")]
        parsed = {k.strip(): v.strip() for k, v in (p for p in pairs if len(p) == 2)}
    if not isinstance(parsed, dict) or not all(isinstance(parsed.get(n), str) for n in names):
        example = ", ".join(f'"{n}": "..."' for n in names)
        raise ValueError(
            f"--auth-params of {plugin} must name {' and '.join(names)}: '{{{example}}}'"
        )
    return {n: parsed[n] for n in names}


def _aws_params(params: str | None) -> dict[str, str]:
    if not params:
        return {}
    try:
        parsed = json.loads(params)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or set(parsed) - set(AWS_PARAMS) or not all(isinstance(v, str) for v in parsed.values()):  # fmt: skip
        raise ValueError(
            f"--auth-params of AuthenticationAws is a JSON object of strings with keys among "
            f'{", ".join(AWS_PARAMS)}, e.g. \'{{"region": "eu-west-1"}}\', not {params!r}'
        )
    return parsed
