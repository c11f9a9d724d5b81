"""The composition root: builds the engine's services from settings, clients and a runtime."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass

from magnetar_core import ports
from magnetar_core.adapters.aws.buffers import BufferStore
from magnetar_core.adapters.aws.clients import (
    BotoClient,
    make_clients,
    make_stepfunctions_client,
    new_session,
)
from magnetar_core.adapters.aws.commit_signal import PollingSignal
from magnetar_core.adapters.aws.compaction import CompactionStore
from magnetar_core.adapters.aws.credentials import SsmParameters, StsCallerIdentity
from magnetar_core.adapters.aws.cursors import CursorStore
from magnetar_core.adapters.aws.entries import EntryStore
from magnetar_core.adapters.aws.functions import FunctionStateStore, FunctionStore
from magnetar_core.adapters.aws.glue import GlueJobLauncher
from magnetar_core.adapters.aws.history import CloudWatchHistory
from magnetar_core.adapters.aws.lambda_target import LambdaTarget
from magnetar_core.adapters.aws.log import LogStore
from magnetar_core.adapters.aws.namespaces import NamespaceStore
from magnetar_core.adapters.aws.policies import PolicyStore
from magnetar_core.adapters.aws.producers import ProducerStateStore
from magnetar_core.adapters.aws.schemas import SchemaStore
from magnetar_core.adapters.aws.security import PermissionStore, TenantStore
from magnetar_core.adapters.aws.timers import TimerStarter
from magnetar_core.adapters.aws.topics import TopicStore
from magnetar_core.adapters.aws.triggers import TriggerStore
from magnetar_core.adapters.aws.wakes import TriggerWakes
from magnetar_core.adapters.aws.watches import ManagementConnections, WatchStore
from magnetar_core.adapters.targets import Targets, WebhookTarget
from magnetar_core.domain.inbound.routes import routes_from_json
from magnetar_core.domain.response_budget import ResponseBudget
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.security import Role
from magnetar_core.domain.timers import TimerOptions
from magnetar_core.ports import Stores
from magnetar_core.services.access import ProducerAccess
from magnetar_core.services.admin import Admin
from magnetar_core.services.authentication import Authenticator, KeySource
from magnetar_core.services.authorization import Authorization, Security
from magnetar_core.services.compaction import Compaction
from magnetar_core.services.dedup import Deduplicator
from magnetar_core.services.functions import Functions
from magnetar_core.services.functions.dispatch import FunctionTargets
from magnetar_core.services.functions.runtime import FunctionRuntime
from magnetar_core.services.index_cache import IndexCache
from magnetar_core.services.ingest import Ingest
from magnetar_core.services.namespaces import Namespaces
from magnetar_core.services.nonpersistent import NonPersistent
from magnetar_core.services.notify import Notify
from magnetar_core.services.produce import Producer
from magnetar_core.services.produce_many import ProduceMany
from magnetar_core.services.quotas import Quotas
from magnetar_core.services.schemas import SchemaPolicies, Schemas
from magnetar_core.services.stats import Stats
from magnetar_core.services.subscriptions import DispatchLimits, Subscriptions
from magnetar_core.services.subscriptions.compacted_reads import CompactedReads
from magnetar_core.services.subscriptions.holds import Holds
from magnetar_core.services.tenancy import Registry
from magnetar_core.services.tenancy_namespaces import NamespaceAdmin
from magnetar_core.services.tenancy_permissions import Permissions
from magnetar_core.services.tenancy_tenants import Tenants
from magnetar_core.services.throttling import Throttling
from magnetar_core.services.timers import DelayTimers
from magnetar_core.services.topic_admin import TopicAdmin
from magnetar_core.services.topics import Topics
from magnetar_core.services.triggers import Triggers
from magnetar_core.services.triggers.delivery import Delivery
from magnetar_core.services.triggers.fanout import FanOut
from magnetar_core.settings import Settings
from magnetar_wire import token_keys as token_keys_module
from magnetar_wire.tokens import VerificationKeys

LOCAL_LAUNCHER_MODULE = "magnetar_local.launcher"
"""Where the local stack's job launcher lives (not in the Lambda layer: imported on use)."""
LOCAL_SIGNAL_MODULE = "magnetar_local.commit_signal"
"""Where the local stack's process-wide commit signal lives (imported on use, as the launcher)."""
LOCAL_HISTORY_MODULE = "magnetar_local.history"
"""Where the local stack's metrics history lives (imported on use, as the launcher)."""


@dataclass(frozen=True)
class Engine:
    """Everything a handler calls: topics, producer, subscriptions, stats, admin, and the
    tenancy use cases (tenants and clusters, namespaces, permissions), triggers (their
    delivery and the stream's `fanout`) and the inbound sources (`ingest`)."""

    runtime: Runtime
    topics: Topics
    producer: Producer
    subscriptions: Subscriptions
    stats: Stats
    admin: Admin
    namespaces: Namespaces
    quotas: Quotas
    throttling: Throttling
    access: ProducerAccess
    entries: ports.EntryStore
    compaction: Compaction
    tenants: Tenants
    namespace_admin: NamespaceAdmin
    permissions: Permissions
    security: Security
    triggers: Triggers
    delivery: Delivery
    fanout: FanOut
    ingest: Ingest
    functions: Functions
    function_runtime: FunctionRuntime
    schemas: Schemas
    schema_policies: SchemaPolicies
    notify: Notify
    produce_many: ProduceMany
    """Multi-entry produce requests (``application/vnd.magnetar.entries``)."""

    @classmethod
    def build(
        cls,
        settings: Settings,
        runtime: Runtime | None = None,
        clients: tuple | None = None,
        *,
        starter: ports.TimerStarter | None = None,
        launcher: ports.JobLauncher | None = None,
        keys: VerificationKeys | None = None,
        targets: ports.TriggerTarget | None = None,
        wakes: ports.TriggerWakes | None = None,
        connections: ports.Connections | None = None,
        signal: ports.CommitSignal | None = None,
    ) -> Engine:
        """Wire the engine on AWS; ``clients`` is ``(dynamodb, s3)`` or ``(dynamodb, s3,
        stepfunctions)`` (made from settings when None or missing). Delay timers start
        through ``starter`` when given, else through the settings' state machine (none:
        delays off); jobs start through ``launcher`` when given, else the settings' one;
        tokens are verified with ``keys`` when given, else the settings' (``token_keys``);
        triggers deliver through ``targets`` (default: webhooks and Lambda) and are woken
        later through ``wakes`` (default: the settings' wake workflow, if any); channel
        notices go to ``connections`` (default: the settings' management API, if any);
        long-polls are woken through ``signal`` (default: ``commit_signal_of(settings)``)."""
        dynamodb, s3, *rest = clients or make_clients(settings)
        timer_arn = settings.timer_state_machine_arn if starter is None else None
        wake_arn = settings.trigger_wake_state_machine_arn if wakes is None else None
        if timer_arn or wake_arn:
            sfn = rest[0] if rest else make_stepfunctions_client(settings)
            starter = TimerStarter(sfn, timer_arn) if timer_arn else starter
            wakes = TriggerWakes(sfn, wake_arn) if wake_arn else wakes
        stores = aws_stores(settings, dynamodb, s3)
        if targets is None:
            targets = Targets(
                webhook=WebhookTarget(allow_private=settings.trigger_private_webhooks),
                lambdas=LambdaTarget(lambda: make_lambda_client(settings)),
            )
        if connections is None and settings.notify_endpoint:
            connections = ManagementConnections(lambda: make_management_client(settings))
        if signal is None:
            signal = commit_signal_of(settings)
        return cls.assemble(
            settings, stores, runtime, starter, launcher, keys, targets, wakes, connections,
            signal,
        )

    @classmethod
    def assemble(
        cls,
        settings: Settings,
        stores: Stores,
        runtime: Runtime | None = None,
        starter: ports.TimerStarter | None = None,
        launcher: ports.JobLauncher | None = None,
        keys: VerificationKeys | None = None,
        targets: ports.TriggerTarget | None = None,
        wakes: ports.TriggerWakes | None = None,
        connections: ports.Connections | None = None,
        signal: ports.CommitSignal | None = None,
    ) -> Engine:
        """Wire the engine's services on ``stores`` (AWS or in-memory adapters); ``starter``
        starts delay timers (None: delays off); ``launcher`` starts maintenance jobs (None:
        the one ``settings.job_launcher`` names, made on first use); ``keys`` verify tokens
        (None: the settings' keys, read now when authentication is on; raises InvalidKey);
        ``targets`` take triggers' batches (None: webhooks and local functions only); Pulsar
        Functions' batches run in this process, or in ``settings.function_runner``'s Lambda;
        ``wakes`` schedules triggers' later wakes (None: commits alone wake them);
        ``connections`` take the notification channel's notices (None: none are sent);
        ``signal`` carries commits to long-polls (None: none does, waits poll the head
        through the runtime's sleep)."""
        runtime = runtime or Runtime()
        if signal is None:
            signal = PollingSignal(runtime.sleep_ms)
        log, cursors, entries = stores.log, stores.cursors, stores.entries
        registry = Registry(stores.tenants, stores.namespaces, settings.cluster_name)
        topics = Topics(stores.topics, log, cursors, runtime, registry)
        namespaces = Namespaces(
            stores.policies,
            stores.topics,
            topics,
            runtime,
            settings.max_message_size_bytes,
            settings.policy_cache_ms,
            registry=registry,
            delayed_delivery_enabled=settings.delayed_delivery_enabled,
            delayed_delivery_tick_ms=settings.delayed_delivery_tick_ms,
        )
        dedup = Deduplicator(log, stores.producer_state, settings.dedup_snapshot_every)
        quotas = Quotas(namespaces)
        throttling = Throttling(
            quotas,
            log,
            cursors,
            runtime,
            containers=settings.rate_limit_containers,
            check_ms=settings.backlog_check_ms,
            # late-bound: subscriptions are made below (they need the producer)
            evictions=lambda: subscriptions.operations,
        )
        non_persistent = NonPersistent(
            topics,
            cursors,
            stores.buffers,
            runtime,
            settings.consumer_lease_ms,
            settings.receive_check_interval_ms,
        )
        producer = Producer(
            topics,
            log,
            entries,
            runtime,
            namespaces,
            dedup,
            non_persistent,
            settings.commit_max_attempts,
            throttling=throttling,
            index_inline_max_bytes=settings.index_inline_max_bytes,
            signal=signal,
        )
        subscriptions = Subscriptions(
            topics,
            log,
            cursors,
            entries,
            runtime,
            _dispatch_limits(settings),
            IndexCache(),
            timers=DelayTimers(_timer_options(settings), starter, runtime.now_ms),
            namespaces=namespaces,
            producer=producer,
            non_persistent=non_persistent,
            compacted=CompactedReads(
                stores.compaction, log, IndexCache(), settings.max_unacked_entries_per_consumer
            ),
            response=ResponseBudget(
                settings.receive_response_max_bytes,
                settings.inline_entry_max_bytes,
                settings.response_inline_budget_bytes,
            ),
            download_url_expiry_s=settings.download_url_expiry_s,
            throttling=throttling,
            signal=signal,
        )
        stats = Stats(
            topics, log, cursors, stores.producer_state, stores.compaction, runtime.now_ms
        )
        triggers = Triggers(
            stores.triggers,
            topics,
            subscriptions,
            runtime,
            settings.commit_max_attempts,
            allow_private_webhooks=settings.trigger_private_webhooks,
            wakes=wakes,
        )
        function_runtime = FunctionRuntime(
            stores.functions, stores.function_state, producer, topics, runtime
        )
        targets = FunctionTargets(
            function_runtime,
            targets or Targets(WebhookTarget(allow_private=settings.trigger_private_webhooks)),
            settings.function_runner,
        )
        delivery = Delivery(subscriptions, topics, targets, runtime)
        make_launcher = (lambda: launcher) if launcher is not None else launcher_factory(settings)
        schema_policies = SchemaPolicies(namespaces)
        namespace_admin = NamespaceAdmin(
            registry, stores.namespaces, stores.policies, stores.permissions, topics, runtime
        )
        return cls(
            runtime=runtime,
            topics=topics,
            producer=producer,
            subscriptions=subscriptions,
            stats=stats,
            admin=Admin(
                topics,
                subscriptions,
                stats,
                registry,
                triggers,
                TopicAdmin(topics, producer, dedup, subscriptions),
            ),
            namespaces=namespaces,
            quotas=quotas,
            throttling=throttling,
            access=ProducerAccess(
                topics,
                producer,
                stores.producer_state,
                namespaces,
                dedup,
                runtime,
                settings.producer_lease_ms,
                settings.receive_max_wait_ms,
                settings.commit_max_attempts,
            ),
            entries=entries,
            compaction=Compaction(topics, stores.compaction, make_launcher, runtime, log=log),
            tenants=Tenants(registry, stores.tenants, namespace_admin, runtime),
            namespace_admin=namespace_admin,
            permissions=Permissions(registry, stores.permissions, runtime),
            security=security_of(settings, stores, keys),
            triggers=triggers,
            delivery=delivery,
            fanout=FanOut(triggers, delivery, runtime, wakes),
            functions=Functions(
                stores.functions,
                stores.function_state,
                triggers,
                topics,
                runtime,
                settings.commit_max_attempts,
            ),
            ingest=Ingest(
                producer,
                routes_from_json(settings.ingest_routes),
                runtime,
                entries_bucket=settings.entries_bucket,
            ),
            function_runtime=function_runtime,
            schemas=Schemas(stores.schemas, schema_policies, runtime, settings.commit_max_attempts),
            schema_policies=schema_policies,
            notify=Notify(
                stores.watches,
                connections,
                Holds(subscriptions.context),
                runtime,
                url=settings.notify_url,
            ),
            produce_many=ProduceMany(producer, runtime.now_ms),
        )


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
        log=LogStore(dynamodb, settings.log_table, settings.cursors_table),
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


def security_of(
    settings: Settings, stores: Stores, keys: VerificationKeys | None = None
) -> Security:
    """The edge's security from settings: authentication on or off, the token keys
    (``keys``, else ``token_keys(settings)`` when on), the authorization on the stores."""
    enabled = settings.authentication_enabled
    if enabled and keys is None:
        keys = token_keys(settings)
    authorization = Authorization(
        stores.tenants,
        stores.permissions,
        (Role(r) for r in settings.superuser_roles),
        settings.authorization_cache_ms,
    )
    return Security(enabled, keys, authorization)


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


def _dispatch_limits(settings: Settings) -> DispatchLimits:
    return DispatchLimits(
        max_wait_ms=settings.receive_max_wait_ms,
        check_interval_ms=settings.receive_check_interval_ms,
        check_min_interval_ms=settings.receive_check_min_interval_ms,
        max_unacked_entries=settings.max_unacked_entries_per_consumer,
        max_attempts=settings.commit_max_attempts,
        consumer_lease_ms=settings.consumer_lease_ms,
    )


def _timer_options(settings: Settings) -> TimerOptions:
    return TimerOptions(
        settings.delayed_delivery_tick_ms,
        settings.delayed_delivery_strict,
        settings.delayed_delivery_enabled,
        settings.delayed_delivery_release_grace_ms,
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


def launcher_factory(settings: Settings) -> Callable[[], ports.JobLauncher]:
    """A factory of the job launcher ``settings`` name (made on first use: a Glue client is
    not worth building in every Lambda container)."""
    return lambda: launcher_from_settings(settings)


def authenticator_from_settings(
    settings: Settings, ssm: BotoClient | None = None, identity: ports.CallerIdentity | None = None
) -> Authenticator:
    """The authenticator of ``settings``: keys from ``TOKEN_SECRET_KEY`` /
    ``TOKEN_PUBLIC_KEY`` and the SSM parameter ``TOKEN_KEY_PARAMETER`` (read through ``ssm``,
    an SSM client made here when none is given and a parameter is named; read on first use),
    IAM tokens checked by STS (``identity``; default: STS over HTTPS, or the emulator's
    endpoint locally). Makes no AWS request."""
    parameters = None
    if settings.token_key_parameter:
        if ssm is None:
            session = new_session(settings.region)
            ssm = session.client("ssm", endpoint_url=settings.endpoint_url)
        parameters = SsmParameters(ssm)
    keys = KeySource(
        settings.token_secret_key,
        settings.token_public_key,
        settings.token_key_parameter,
        parameters,
    )
    extra = (settings.endpoint_url.rstrip("/"),) if settings.endpoint_url else ()
    return Authenticator(keys, identity or StsCallerIdentity(), settings.cluster_name, extra)
