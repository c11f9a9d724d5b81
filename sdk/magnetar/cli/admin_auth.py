"""``magnetar admin``'s ``--auth-plugin`` and ``--auth-params``, as pulsar-admin's.

- token (the default; ``org.apache.pulsar.client.impl.auth.AuthenticationToken``,
  ``AuthenticationToken`` or ``token``): ``--auth-params`` is ``token:<token>``,
  ``file:///path`` or the token itself; without it ``$MAGNETAR_AUTH_TOKEN``, else the running
  ``magnetar local --auth``'s token file (``magnetar.cli.service_url.auth_token``), else none.
- IAM (``AuthenticationAws``, ``magnetar.AuthenticationAws`` or ``aws``): ``--auth-params``
  is a JSON object of ``AuthenticationAws``' arguments (``cluster``, ``region``,
  ``profile``, ``endpoint_url``), or nothing for its defaults.
"""

from __future__ import annotations

import json

from magnetar.authentication import Authentication, AuthenticationToken
from magnetar.cli.service_url import ServiceUrl, auth_token

TOKEN_PLUGINS = ("org.apache.pulsar.client.impl.auth.AuthenticationToken", "AuthenticationToken", "token")  # fmt: skip
AWS_PLUGINS = ("AuthenticationAws", "magnetar.AuthenticationAws", "aws")
AWS_PARAMS = ("cluster", "region", "profile", "endpoint_url")
AUTH_PLUGIN_HELP = "AuthenticationToken (default) or AuthenticationAws (IAM; --auth-params a JSON object of its arguments)"  # fmt: skip


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
    raise ValueError(
        f"--auth-plugin {plugin!r} is not one of {', '.join(TOKEN_PLUGINS + AWS_PLUGINS)}"
    )


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
