"""``magnetar admin --auth-plugin/--auth-params`` in pulsar-admin's forms for Basic and TLS
client certificates (token and IAM are tested with the CLI's token handling)."""

from __future__ import annotations

import base64

import pytest

from magnetar.authentication import AuthenticationBasic, AuthenticationTLS
from magnetar.cli.admin.auth import authentication
from magnetar.cli.service_url import ServiceUrl

SERVICE = ServiceUrl("http://127.0.0.1:1", "a test")


@pytest.mark.parametrize("plugin", ["org.apache.pulsar.client.impl.auth.AuthenticationBasic",
                                    "AuthenticationBasic", "basic"])  # fmt: skip
def test_basic_takes_pulsar_admins_user_id_and_password(plugin):
    for params in ('{"userId": "app", "password": "p:w"}', "userId:app,password:p:w"):
        auth = authentication(plugin, params, SERVICE)
        assert isinstance(auth, AuthenticationBasic)
        expected = "Basic " + base64.b64encode(b"app:p:w").decode()
        assert auth._headers() == {"Authorization": expected}


def test_tls_takes_the_certificate_and_key_files_and_presents_them():
    for params in ("tlsCertFile:/c.pem,tlsKeyFile:/k.pem",
                   '{"tlsCertFile": "/c.pem", "tlsKeyFile": "/k.pem"}'):  # fmt: skip
        auth = authentication("org.apache.pulsar.client.impl.auth.AuthenticationTls", params, SERVICE)  # fmt: skip
        assert isinstance(auth, AuthenticationTLS)
        assert (auth._client_cert(), auth._headers()) == (("/c.pem", "/k.pem"), {})


@pytest.mark.parametrize(
    ("plugin", "params", "message"),
    [
        ("AuthenticationBasic", None, "userId and password"),
        ("AuthenticationBasic", '{"userId": "app"}', "userId and password"),
        ("AuthenticationTls", "tlsCertFile:/c.pem", "tlsCertFile and tlsKeyFile"),
        ("Kerberos", None, "is not one of"),
    ],
)
def test_missing_parameters_or_an_unknown_plugin_are_usage_errors(plugin, params, message):
    with pytest.raises(ValueError, match=message):
        authentication(plugin, params, SERVICE)
