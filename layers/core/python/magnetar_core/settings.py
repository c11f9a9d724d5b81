"""Typed settings, read once at the edge (a handler's module scope or a CLI's main)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    """Where the data lives and the knobs of the data paths.

    Times are in milliseconds, sizes in bytes.
    """

    topics_table: str
    log_table: str
    cursors_table: str
    entries_bucket: str
    endpoint_url: str | None = None
    region: str = "us-east-1"
    receive_max_wait_ms: int = 20_000
    receive_check_interval_ms: int = 100
    """The longest pause of a long-poll between head checks (``RECEIVE_CHECK_INTERVAL_MS``)."""
    receive_check_min_interval_ms: int = 20
    """The shortest, right after activity, where commits cannot wake waits
    (``RECEIVE_CHECK_MIN_INTERVAL_MS``; ``domain.check_interval``)."""
    commit_signal: str = "poll"
    """``COMMIT_SIGNAL``: ``poll`` (Lambda: waits poll the head) or ``local`` (every handler
    of the process shares one in-memory signal: a commit wakes waits; the local stack)."""
    max_message_size_bytes: int = 5 * 1024 * 1024
    max_unacked_entries_per_consumer: int = 50_000
    commit_max_attempts: int = 16
    producer_lease_ms: int = 30_000
    consumer_lease_ms: int = 60_000
    policy_cache_ms: int = 5_000
    rate_limit_containers: int = 1
    backlog_check_ms: int = 5_000
    receive_response_max_bytes: int = 4 * 1024 * 1024
    """The most one receive response body holds, base64 and fields counted
    (``RECEIVE_RESPONSE_MAX_BYTES``; Lambda's limit is 6 MB): the dispatcher leases no
    more than fits, the rest goes to the next receive."""
    inline_entry_max_bytes: int = 1024 * 1024
    """The largest S3-stored entry sent as bytes in a receive response, not as a URL."""
    response_inline_budget_bytes: int = 3 * 1024 * 1024
    """The S3-stored bytes one receive response carries as bytes, at most."""
    index_inline_max_bytes: int = 4096
    """The largest log index item (``INDEX_INLINE_MAX_BYTES``; attribute names + values, as
    DynamoDB sizes it) that carries its entry's bytes itself instead of an S3 object; 0:
    every entry goes to S3. Not ``inline_entry_max_bytes`` (inline in a receive response).
    Why 4 KB: docs/architecture/producing.md, "Inline entries"."""
    log_hole_after_ms: int = 2000
    """``LOG_HOLE_AFTER_MS``: a gap in a ledger whose next entry id was allocated this long
    ago is a dead writer's; readers settle it with a hole (``domain.sequencing``)."""
    dedup_snapshot_every: int = 1000
    timer_state_machine_arn: str | None = None
    """The delay timer workflow (``TIMER_STATE_MACHINE_ARN``); None turns delays off."""
    timer_express_state_machine_arn: str | None = None
    """The same timer as an Express workflow (``TIMER_EXPRESS_STATE_MACHINE_ARN``), for
    waits up to ``timer_express_max_wait_ms``; None: every timer is Standard."""
    timer_express_max_wait_ms: int = 60_000
    """``TIMER_EXPRESS_MAX_WAIT_MS``: the longest wait an Express timer takes
    (``domain.timers.TimerKinds``)."""
    trigger_wake_state_machine_arn: str | None = None
    """The trigger wake workflow (``TRIGGER_WAKE_STATE_MACHINE_ARN``); None: triggers are
    woken by commits only (the local stack wakes them in-process)."""
    delayed_delivery_enabled: bool = True
    delayed_delivery_tick_ms: int = 1000
    delayed_delivery_strict: bool = False
    job_launcher: str = "local"
    """How maintenance jobs start (``JOB_LAUNCHER``): ``local`` subprocess or ``glue``."""
    metrics_history: str = "cloudwatch"
    """Where the console's charts read the past (``METRICS_HISTORY``): ``cloudwatch`` (the
    handlers' EMF metrics) or ``local`` (the local stack's in-memory minutes)."""
    glue_job_prefix: str = "magnetar"
    """Glue job names are ``<prefix>-<job>`` (``GLUE_JOB_PREFIX``, the stack name)."""
    job_scripts_dir: str | None = None
    """Where spark_glue/ is for local runs (``JOB_SCRIPTS_DIR``; None: next to the code)."""
    job_log_dir: str | None = None
    """Where local job runs write their output (``JOB_LOG_DIR``; None: a temp folder)."""
    delayed_delivery_release_grace_ms: int = 30_000
    """A delay bucket overdue by more than this is released though its timer never fired."""
    cluster_name: str = "magnetar"
    """The deployment's one Pulsar cluster (``CLUSTER_NAME``): what ``GET /admin/v2/clusters``
    lists and the only name a tenant's ``allowedClusters`` may hold."""
    authentication_enabled: bool = False
    """Every request must prove a role (``AUTHENTICATION_ENABLED``); off: anonymous, all allowed."""
    superuser_roles: tuple[str, ...] = ()
    """Roles that may do anything (``SUPERUSER_ROLES``, comma-separated)."""
    token_secret_key: str | None = None
    """HS256 key reference (``TOKEN_SECRET_KEY``): ``file:///path``, ``data:;base64,...``."""
    token_public_key: str | None = None
    """RS256/ES256 public key reference (``TOKEN_PUBLIC_KEY``), same forms."""
    token_key_parameter: str | None = None
    """SSM SecureString parameter holding the key reference (``TOKEN_KEY_PARAMETER``)."""
    anonymous_user_role: str | None = None
    """The role of requests without credentials when authentication is on
    (``ANONYMOUS_USER_ROLE``, Pulsar's ``anonymousUserRole``; None: they are refused)."""
    basic_auth_htpasswd: str | None = None
    """The htpasswd file of Basic authentication as a key reference (``BASIC_AUTH_HTPASSWD``:
    ``file:///path`` or ``data:;base64,...``, as Pulsar's ``basicAuthConf``)."""
    basic_auth_secret: str | None = None
    """The same held in a secret read through SSM (``BASIC_AUTH_SECRET``, e.g.
    ``/aws/reference/secretsmanager/<secret id>``); the authorizer reads it."""
    tls_client_authentication: bool = False
    """A verified client certificate's CN is the role of a request without an
    ``Authorization`` header (``TLS_CLIENT_AUTHENTICATION``, Pulsar's AuthenticationProviderTls)."""
    oauth2_issuer: str | None = None
    """The OAuth 2.0 issuer whose access tokens prove roles (``OAUTH2_ISSUER``: its ``iss``,
    e.g. an Amazon Cognito user pool's ``https://cognito-idp.<region>.amazonaws.com/<id>``)."""
    oauth2_jwks_url: str | None = None
    """Where its keys are (``OAUTH2_JWKS_URL``; None: ``<issuer>/.well-known/jwks.json``)."""
    oauth2_audience: str | None = None
    """The ``aud`` access tokens must hold (``OAUTH2_AUDIENCE``; None: not checked)."""
    oauth2_role_claim: str = "sub"
    """The claim that names the role (``OAUTH2_ROLE_CLAIM``, Pulsar's ``tokenAuthClaim``)."""
    authorization_cache_ms: int = 1_000
    """How long a container reuses a tenant's info and a namespace's permissions
    (``AUTHORIZATION_CACHE_MS``; 0: read them on every request)."""
    download_url_expiry_s: int = 60
    """How long a presigned GET URL of a large entry stays valid (``DOWNLOAD_URL_EXPIRY_S``)."""
    trigger_private_webhooks: bool = False
    """Webhook triggers may call http and private addresses (``TRIGGER_PRIVATE_WEBHOOKS``;
    off on AWS: https to public addresses only; on in the local stack)."""
    ingest_routes: str = ""
    """Inbound sources' routes (``INGEST_ROUTES``, a JSON list; docs/architecture/inbound.md); empty: the ingest function takes no event."""
    notify_table: str = ""
    """The notification channel's table (``NOTIFY_TABLE``; issue 16, ``domain.notify``)."""
    notify_url: str | None = None
    """The channel's WebSocket URL advertised to consumers (``NOTIFY_URL``; None: no
    channel, idle consumers long-poll)."""
    notify_endpoint: str | None = None
    """The channel's management API, where notices are posted (``NOTIFY_ENDPOINT``, the
    WebSocket stage's https URL; None: no notice is posted)."""
    function_runner: str | None = None
    """The Lambda that runs Pulsar Functions' batches (``FUNCTION_RUNNER``; None: they run
    in the delivering process, as in the local stack)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Build settings from environment variables (the names in template.yaml).

        Raises KeyError naming the missing variable when a table or bucket name is absent.
        """

        def number(name: str, default: int) -> int:
            return int(env.get(name, default))

        def flag(name: str, default: bool) -> bool:
            return str(env.get(name, default)).strip().lower() in ("1", "true", "yes", "on")

        def roles(text: str) -> tuple[str, ...]:
            return tuple(r.strip() for r in text.split(",") if r.strip())

        return cls(
            topics_table=env["TOPICS_TABLE"],
            log_table=env["LOG_TABLE"],
            cursors_table=env["CURSORS_TABLE"],
            entries_bucket=env["ENTRIES_BUCKET"],
            endpoint_url=env.get("AWS_ENDPOINT_URL") or None,
            region=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
            receive_max_wait_ms=number("RECEIVE_MAX_WAIT_MS", 20_000),
            receive_check_interval_ms=number("RECEIVE_CHECK_INTERVAL_MS", 100),
            receive_check_min_interval_ms=number("RECEIVE_CHECK_MIN_INTERVAL_MS", 20),
            receive_response_max_bytes=number("RECEIVE_RESPONSE_MAX_BYTES", 4 * 1024 * 1024),
            commit_signal=env.get("COMMIT_SIGNAL") or "poll",
            max_message_size_bytes=number("MAX_MESSAGE_SIZE_BYTES", 5 * 1024 * 1024),
            producer_lease_ms=number("PRODUCER_LEASE_MS", 30_000),
            consumer_lease_ms=number("CONSUMER_LEASE_MS", 60_000),
            policy_cache_ms=number("POLICY_CACHE_MS", 5_000),
            rate_limit_containers=number("RATE_LIMIT_CONTAINERS", 1),
            backlog_check_ms=number("BACKLOG_CHECK_MS", 5_000),
            index_inline_max_bytes=number("INDEX_INLINE_MAX_BYTES", 4096),
            log_hole_after_ms=number("LOG_HOLE_AFTER_MS", 2000),
            timer_state_machine_arn=env.get("TIMER_STATE_MACHINE_ARN") or None,
            timer_express_state_machine_arn=env.get("TIMER_EXPRESS_STATE_MACHINE_ARN") or None,
            timer_express_max_wait_ms=number("TIMER_EXPRESS_MAX_WAIT_MS", 60_000),
            trigger_wake_state_machine_arn=env.get("TRIGGER_WAKE_STATE_MACHINE_ARN") or None,
            delayed_delivery_enabled=flag("DELAYED_DELIVERY_ENABLED", True),
            delayed_delivery_tick_ms=number("DELAYED_DELIVERY_TICK_MS", 1000),
            delayed_delivery_strict=flag("DELAYED_DELIVERY_STRICT", False),
            job_launcher=env.get("JOB_LAUNCHER") or "local",
            metrics_history=env.get("METRICS_HISTORY") or "cloudwatch",
            glue_job_prefix=env.get("GLUE_JOB_PREFIX") or "magnetar",
            job_scripts_dir=env.get("JOB_SCRIPTS_DIR") or None,
            job_log_dir=env.get("JOB_LOG_DIR") or None,
            delayed_delivery_release_grace_ms=number("DELAYED_DELIVERY_RELEASE_GRACE_MS", 30_000),
            cluster_name=env.get("CLUSTER_NAME") or "magnetar",
            authentication_enabled=flag("AUTHENTICATION_ENABLED", False),
            superuser_roles=roles(env.get("SUPERUSER_ROLES", "")),
            token_secret_key=env.get("TOKEN_SECRET_KEY") or None,
            token_public_key=env.get("TOKEN_PUBLIC_KEY") or None,
            token_key_parameter=env.get("TOKEN_KEY_PARAMETER") or None,
            anonymous_user_role=env.get("ANONYMOUS_USER_ROLE", "").strip() or None,
            basic_auth_htpasswd=env.get("BASIC_AUTH_HTPASSWD") or None,
            basic_auth_secret=env.get("BASIC_AUTH_SECRET") or None,
            tls_client_authentication=flag("TLS_CLIENT_AUTHENTICATION", False),
            oauth2_issuer=env.get("OAUTH2_ISSUER") or None,
            oauth2_jwks_url=env.get("OAUTH2_JWKS_URL") or None,
            oauth2_audience=env.get("OAUTH2_AUDIENCE") or None,
            oauth2_role_claim=env.get("OAUTH2_ROLE_CLAIM") or "sub",
            authorization_cache_ms=number("AUTHORIZATION_CACHE_MS", 1_000),
            download_url_expiry_s=number("DOWNLOAD_URL_EXPIRY_S", 60),
            trigger_private_webhooks=flag("TRIGGER_PRIVATE_WEBHOOKS", False),
            ingest_routes=env.get("INGEST_ROUTES", ""),
            function_runner=env.get("FUNCTION_RUNNER") or None,
            notify_table=env.get("NOTIFY_TABLE", ""),
            notify_url=env.get("NOTIFY_URL") or None,
            notify_endpoint=env.get("NOTIFY_ENDPOINT") or None,
        )
