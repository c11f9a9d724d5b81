"""The AWS side of the wiring: clients, the DynamoDB and S3 stores, and the adapters the
settings name (job launcher, commit signal, metrics history, authenticator). The local
stack's adapters are imported by name on use: they are not part of the Lambda layer."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable

from magnetar_core import ports
from magnetar_core.adapters.aws.buffers import BufferStore
from magnetar_core.adapters.aws.clients import BotoClient, new_session
from magnetar_core.adapters.aws.compaction import CompactionStore
from magnetar_core.adapters.aws.credentials import SsmParameters, StsCallerIdentity
from magnetar_core.adapters.aws.cursors import CursorStore
from magnetar_core.adapters.aws.entries import EntryStore
from magnetar_core.adapters.aws.functions import FunctionStateStore, FunctionStore
from magnetar_core.adapters.aws.glue import GlueJobLauncher
from magnetar_core.adapters.aws.history import CloudWatchHistory
from magnetar_core.adapters.aws.log import LogStore
from magnetar_core.adapters.aws.namespaces import NamespaceStore
from magnetar_core.adapters.aws.policies import PolicyStore
from magnetar_core.adapters.aws.producers import ProducerStateStore
from magnetar_core.adapters.aws.schemas import SchemaStore
from magnetar_core.adapters.aws.security import PermissionStore, TenantStore
from magnetar_core.adapters.aws.timers import TimerStarter
from magnetar_core.adapters.aws.topics import TopicStore
from magnetar_core.adapters.aws.triggers import TriggerStore
from magnetar_core.adapters.aws.watches import WatchStore
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.timers import TimerKinds
from magnetar_core.engine.options import providers_of
from magnetar_core.ports import Stores
from magnetar_core.services.authentication import Authenticator, KeySource
from magnetar_core.settings import Settings
from magnetar_wire.tokens import VerificationKeys

LOCAL_LAUNCHER_MODULE = "magnetar_local.launcher"
"""Where the local stack's job launcher lives (not in the Lambda layer: imported on use)."""
LOCAL_SIGNAL_MODULE = "magnetar_local.commit_signal"
"""Where the local stack's process-wide commit signal lives (imported on use, as the launcher)."""
LOCAL_HISTORY_MODULE = "magnetar_local.history"
"""Where the local stack's metrics history lives (imported on use, as the launcher)."""


def make_lambda_client(settings: Settings) -> BotoClient:
    """A Lambda client for trigger targets (the emulator's endpoint when one is set)."""
    session = new_session(settings.region)
    return session.client("lambda", endpoint_url=settings.endpoint_url)


def make_management_client(settings: Settings) -> BotoClient:
    """An API Gateway management API client on the channel's endpoint (``NOTIFY_ENDPOINT``)."""
    session = new_session(settings.region)
    return session.client("apigatewaymanagementapi", endpoint_url=settings.notify_endpoint)


def aws_stores(settings: Settings, dynamodb: BotoClient, s3: BotoClient) -> Stores:
    """The DynamoDB and S3 adapters on the settings' tables and bucket."""
    return Stores(
        topics=TopicStore(dynamodb, settings.topics_table),
        log=LogStore(
            dynamodb,
            settings.log_table,
            settings.cursors_table,
            hole_after_ms=settings.log_hole_after_ms,
        ),
        cursors=CursorStore(dynamodb, settings.cursors_table),
        entries=EntryStore(s3, settings.entries_bucket),
        policies=PolicyStore(dynamodb, settings.topics_table),
        producer_state=ProducerStateStore(dynamodb, settings.cursors_table),
        buffers=BufferStore(dynamodb, settings.cursors_table),
        compaction=CompactionStore(dynamodb, settings.cursors_table, settings.log_table),
        tenants=TenantStore(dynamodb, settings.topics_table),
        permissions=PermissionStore(dynamodb, settings.topics_table),
        namespaces=NamespaceStore(dynamodb, settings.topics_table),
        triggers=TriggerStore(dynamodb, settings.topics_table),
        functions=FunctionStore(dynamodb, settings.topics_table),
        function_state=FunctionStateStore(dynamodb, settings.topics_table),
        schemas=SchemaStore(dynamodb, settings.topics_table),
        watches=WatchStore(dynamodb, settings.notify_table),
    )


def launcher_from_settings(settings: Settings, glue: BotoClient | None = None) -> ports.JobLauncher:
    """The job launcher ``settings.job_launcher`` names: ``glue`` (a Glue client is made
    when none is given) or ``local`` (the local stack's subprocess launcher, imported now:
    it is not part of the Lambda layer). Raises ValueError for another name,
    ModuleNotFoundError for ``local`` without the local stack installed."""
    if settings.job_launcher == "local":
        return importlib.import_module(LOCAL_LAUNCHER_MODULE).LocalJobLauncher(settings)
    if settings.job_launcher == "glue":
        if glue is None:
            glue = new_session(settings.region).client("glue")
        return GlueJobLauncher(glue, settings.glue_job_prefix)
    raise ValueError(f"JOB_LAUNCHER must be local or glue, not {settings.job_launcher!r}")


def launcher_factory(settings: Settings) -> Callable[[], ports.JobLauncher]:
    """A factory of the job launcher ``settings`` name (made on first use: a Glue client is
    not worth building in every Lambda container)."""
    return lambda: launcher_from_settings(settings)


def commit_signal_of(settings: Settings) -> ports.CommitSignal | None:
    """The commit signal ``settings.commit_signal`` names: ``poll`` (None: no commit reaches
    another Lambda container, waits poll the head at the adaptive interval) or ``local``
    (the local stack's one signal of the process, imported now: every handler container's
    commit wakes the others' waits). Raises ValueError for another name,
    ModuleNotFoundError for ``local`` without the local stack installed."""
    if settings.commit_signal == "poll":
        return None
    if settings.commit_signal == "local":
        signal: ports.CommitSignal = importlib.import_module(LOCAL_SIGNAL_MODULE).SHARED
        return signal
    raise ValueError(f"COMMIT_SIGNAL must be poll or local, not {settings.commit_signal!r}")


def local_wakes_of(settings: Settings) -> ports.TriggerWakes | None:
    """With ``COMMIT_SIGNAL=local`` (the local stack), its in-process trigger wakes
    (``magnetar_local.commit_signal.WAKES``); else None."""
    if settings.commit_signal != "local":
        return None
    wakes: ports.TriggerWakes = importlib.import_module(LOCAL_SIGNAL_MODULE).WAKES
    return wakes


def metrics_history(settings: Settings, service: str) -> ports.MetricsHistory:
    """The console's history source ``settings.metrics_history`` names: ``cloudwatch`` (the
    EMF metrics of the ``service`` dimension, in ``POWERTOOLS_METRICS_NAMESPACE``, default
    ``Magnetar``) or ``local`` (the running local stack's, imported now). Raises ValueError
    for another name, LookupError for ``local`` when no local stack runs."""
    if settings.metrics_history == "local":
        return importlib.import_module(LOCAL_HISTORY_MODULE).current()
    if settings.metrics_history == "cloudwatch":
        client = new_session(settings.region).client(
            "cloudwatch", endpoint_url=settings.endpoint_url
        )
        namespace = os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "Magnetar"
        return CloudWatchHistory(client, namespace, service)
    raise ValueError(
        f"METRICS_HISTORY must be cloudwatch or local, not {settings.metrics_history!r}"
    )


def authenticator_from_settings(
    settings: Settings, ssm: BotoClient | None = None, identity: ports.CallerIdentity | None = None
) -> Authenticator:
    """The authenticator of ``settings``: keys from ``TOKEN_SECRET_KEY`` /
    ``TOKEN_PUBLIC_KEY`` and the SSM parameter ``TOKEN_KEY_PARAMETER`` (read through ``ssm``,
    an SSM client made here when none is given and a parameter is named; read on first use),
    IAM tokens checked by STS (``identity``; default: STS over HTTPS, or the emulator's
    endpoint locally). Makes no AWS request."""
    keys = key_source_of(settings, ssm)
    extra = (settings.endpoint_url.rstrip("/"),) if settings.endpoint_url else ()
    secrets = None
    if settings.basic_auth_secret:
        secrets = SsmParameters(ssm or new_session(settings.region).client("ssm", endpoint_url=settings.endpoint_url))  # fmt: skip
    providers = providers_of(settings, secrets)
    return Authenticator(
        keys, identity or StsCallerIdentity(), settings.cluster_name, extra, providers=providers
    )


def key_source_of(settings: Settings, ssm: BotoClient | None = None) -> KeySource:
    """The token keys of ``settings``: ``TOKEN_SECRET_KEY`` / ``TOKEN_PUBLIC_KEY`` and the
    SSM parameter ``TOKEN_KEY_PARAMETER`` (through ``ssm``, made here when none is given and
    a parameter is named), read on first use."""
    parameters = None
    if settings.token_key_parameter:
        if ssm is None:
            session = new_session(settings.region)
            ssm = session.client("ssm", endpoint_url=settings.endpoint_url)
        parameters = SsmParameters(ssm)
    return KeySource(
        settings.token_secret_key,
        settings.token_public_key,
        settings.token_key_parameter,
        parameters,
    )


def function_keys_of(
    settings: Settings, ssm: BotoClient | None = None
) -> Callable[[], VerificationKeys | None] | None:
    """What signs functions' tokens on AWS: the keys of the SSM parameter
    ``TOKEN_KEY_PARAMETER`` (and the ``TOKEN_*_KEY`` references), read on first use (the
    first function batch; one SSM read per container). None when no parameter is named:
    the engine's own keys then (the local stack's key file)."""
    if not settings.authentication_enabled or not settings.token_key_parameter:
        return None
    made: list[KeySource] = []  # the SSM client is made on the first batch, not per container

    def keys() -> VerificationKeys:
        if not made:
            made.append(key_source_of(settings, ssm))
        return made[0].keys()

    return keys


def timer_starter(
    sfn: BotoClient, standard_arn: str, settings: Settings, runtime: Runtime
) -> TimerStarter:
    """The delay timers' starter: the Standard workflow ``standard_arn``, and the Express
    one (when the settings name it) for waits up to ``timer_express_max_wait_ms`` by the
    runtime's clock."""
    return TimerStarter(
        sfn,
        standard_arn,
        settings.timer_express_state_machine_arn,
        runtime.now_ms,
        TimerKinds(settings.timer_express_max_wait_ms),
    )
