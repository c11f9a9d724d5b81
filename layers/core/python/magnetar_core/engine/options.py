"""Settings into the option objects and the security the services are built with."""

from __future__ import annotations

from magnetar_core.adapters.http.jwks import jwks_fetcher
from magnetar_core.domain.response_budget import ResponseBudget
from magnetar_core.domain.security import Role
from magnetar_core.domain.timers import TimerOptions
from magnetar_core.ports import SecretParameters, Stores
from magnetar_core.services.authorization import Authorization, Security
from magnetar_core.services.basic_auth import HtpasswdSource
from magnetar_core.services.credentials import Providers
from magnetar_core.services.oauth2 import OAuth2Tokens
from magnetar_core.services.subscriptions import DispatchLimits
from magnetar_core.settings import Settings
from magnetar_wire import token_keys as token_keys_module
from magnetar_wire.tokens import VerificationKeys


def dispatch_limits(settings: Settings) -> DispatchLimits:
    """The dispatcher's knobs (ms, counts) from the settings."""
    return DispatchLimits(
        max_wait_ms=settings.receive_max_wait_ms,
        check_interval_ms=settings.receive_check_interval_ms,
        check_min_interval_ms=settings.receive_check_min_interval_ms,
        max_unacked_entries=settings.max_unacked_entries_per_consumer,
        max_attempts=settings.commit_max_attempts,
        consumer_lease_ms=settings.consumer_lease_ms,
    )


def timer_options(settings: Settings) -> TimerOptions:
    """Delayed delivery's options (tick, strictness, on or off, release grace in ms)."""
    return TimerOptions(
        settings.delayed_delivery_tick_ms,
        settings.delayed_delivery_strict,
        settings.delayed_delivery_enabled,
        settings.delayed_delivery_release_grace_ms,
    )


def response_budget(settings: Settings) -> ResponseBudget:
    """What one receive response may carry (bytes: the whole, an inline entry, inline ones)."""
    return ResponseBudget(
        settings.receive_response_max_bytes,
        settings.inline_entry_max_bytes,
        settings.response_inline_budget_bytes,
    )


def security_of(
    settings: Settings, stores: Stores, keys: VerificationKeys | None = None
) -> Security:
    """The edge's security from settings: authentication on or off, the token keys
    (``keys``, else ``token_keys(settings)`` when on), the authorization on the stores.
    Raises InvalidKey (a key file that does not read as a key)."""
    enabled = settings.authentication_enabled
    if enabled and keys is None:
        keys = token_keys(settings)
    authorization = Authorization(
        stores.tenants,
        stores.permissions,
        (Role(r) for r in settings.superuser_roles),
        settings.authorization_cache_ms,
    )
    return Security(enabled, keys, authorization, providers_of(settings))


def providers_of(settings: Settings, secrets: SecretParameters | None = None) -> Providers:
    """The providers besides tokens the settings turn on: Basic (the htpasswd file
    ``BASIC_AUTH_HTPASSWD``, or the secret ``BASIC_AUTH_SECRET`` read through ``secrets``,
    on first use), client certificates (``TLS_CLIENT_AUTHENTICATION``), the anonymous role
    (``ANONYMOUS_USER_ROLE``). Raises InvalidMessage for an anonymous role that is no role."""
    basic = None
    if settings.basic_auth_htpasswd or settings.basic_auth_secret:
        basic = HtpasswdSource(settings.basic_auth_htpasswd, settings.basic_auth_secret, secrets)
    anonymous = Role(settings.anonymous_user_role) if settings.anonymous_user_role else None
    return Providers(basic, settings.tls_client_authentication, anonymous, oauth2_of(settings))


def oauth2_of(settings: Settings) -> OAuth2Tokens | None:
    """The OAuth 2.0 issuer's access tokens (``OAUTH2_*``; None without an issuer); its
    JWKS is read on the first token. Raises ValueError for a JWKS URL of another scheme."""
    if not settings.oauth2_issuer:
        return None
    issuer = settings.oauth2_issuer.rstrip("/")
    location = settings.oauth2_jwks_url or f"{issuer}/.well-known/jwks.json"
    return OAuth2Tokens(issuer, jwks_fetcher(location), settings.oauth2_audience,
                        settings.oauth2_role_claim)  # fmt: skip


def token_keys(settings: Settings) -> VerificationKeys | None:
    """The keys of ``TOKEN_SECRET_KEY`` / ``TOKEN_PUBLIC_KEY`` (files read now), or None
    when neither is set (then no token verifies: roles come from the gateway's authorizer
    only). Raises InvalidKey naming what to fix."""
    secret, public = settings.token_secret_key, settings.token_public_key
    if not secret and not public:
        return None
    return VerificationKeys.of(
        token_keys_module.resolve(secret) if secret else None,
        token_keys_module.resolve(public) if public else None,
    )
