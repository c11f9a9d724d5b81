"""Settings carry issue 12's authentication fields, read from template.yaml's variable names."""

from __future__ import annotations

from magnetar_core.settings import Settings

TABLES = {"TOPICS_TABLE": "t", "LOG_TABLE": "l", "CURSORS_TABLE": "c", "ENTRIES_BUCKET": "b"}


def test_authentication_is_off_with_no_superusers_and_no_keys_when_nothing_is_set():
    settings = Settings.from_env(TABLES)
    assert settings.authentication_enabled is False
    assert settings.superuser_roles == ()
    assert (settings.token_secret_key, settings.token_public_key) == (None, None)
    assert settings.token_key_parameter is None
    assert settings.authorization_cache_ms == 1_000


def test_the_auth_variables_become_typed_settings():
    settings = Settings.from_env({
        **TABLES,
        "AUTHENTICATION_ENABLED": "true",
        "SUPERUSER_ROLES": " admin, ops ,,",
        "TOKEN_SECRET_KEY": "file:///keys/secret.key",
        "TOKEN_PUBLIC_KEY": "data:;base64,AAAA",
        "TOKEN_KEY_PARAMETER": "/magnetar/token-key",
        "AUTHORIZATION_CACHE_MS": "250",
    })  # fmt: skip
    assert settings.authentication_enabled is True
    assert settings.superuser_roles == ("admin", "ops")
    assert settings.token_secret_key == "file:///keys/secret.key"
    assert settings.token_public_key == "data:;base64,AAAA"
    assert settings.token_key_parameter == "/magnetar/token-key"
    assert settings.authorization_cache_ms == 250


def test_authentication_enabled_false_is_off():
    assert not Settings.from_env(
        {**TABLES, "AUTHENTICATION_ENABLED": "false"}
    ).authentication_enabled


def test_the_other_providers_variables_become_typed_settings_and_are_off_when_blank():
    settings = Settings.from_env({
        **TABLES,
        "ANONYMOUS_USER_ROLE": " anonymous ",
        "BASIC_AUTH_HTPASSWD": "file:///etc/htpasswd",
        "BASIC_AUTH_SECRET": "/aws/reference/secretsmanager/users",
        "TLS_CLIENT_AUTHENTICATION": "true",
        "OAUTH2_ISSUER": "https://cognito-idp.eu-west-1.amazonaws.com/pool",
        "OAUTH2_AUDIENCE": "urn:pulsar",
        "OAUTH2_ROLE_CLAIM": "client_id",
    })  # fmt: skip
    assert settings.anonymous_user_role == "anonymous"
    assert settings.basic_auth_htpasswd == "file:///etc/htpasswd"
    assert settings.basic_auth_secret == "/aws/reference/secretsmanager/users"
    assert settings.tls_client_authentication is True
    assert settings.oauth2_issuer == "https://cognito-idp.eu-west-1.amazonaws.com/pool"
    assert (settings.oauth2_audience, settings.oauth2_role_claim) == ("urn:pulsar", "client_id")
    blank = Settings.from_env({**TABLES, **{name: "" for name in (
        "ANONYMOUS_USER_ROLE", "BASIC_AUTH_HTPASSWD", "BASIC_AUTH_SECRET", "OAUTH2_ISSUER",
        "OAUTH2_AUDIENCE", "OAUTH2_ROLE_CLAIM")}})  # fmt: skip
    assert (blank.anonymous_user_role, blank.basic_auth_htpasswd, blank.basic_auth_secret,
            blank.oauth2_issuer, blank.oauth2_audience) == (None,) * 5  # fmt: skip
    assert (blank.tls_client_authentication, blank.oauth2_role_claim) == (False, "sub")
