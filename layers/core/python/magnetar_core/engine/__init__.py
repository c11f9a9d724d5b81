"""The composition root: builds the engine's services from settings, clients and a runtime.

``Engine`` (``build`` on AWS, ``assemble`` on any stores) is the one entry point; its
wiring lives by area in this package: ``aws`` (clients, the AWS stores, the adapters the
settings name), ``options`` (settings into option objects and the security), ``messaging``
(topics to subscriptions and the notification channel), ``extensions`` (triggers and
Pulsar Functions). Constructor injection only."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from magnetar_core import ports
from magnetar_core.adapters.aws.clients import make_clients, make_stepfunctions_client
from magnetar_core.adapters.aws.commit_signal import PollingSignal
from magnetar_core.adapters.aws.lambda_target import LambdaTarget
from magnetar_core.adapters.aws.wakes import TriggerWakes
from magnetar_core.adapters.aws.watches import ManagementConnections
from magnetar_core.adapters.targets import Targets, WebhookTarget
from magnetar_core.domain.inbound.routes import routes_from_json
from magnetar_core.domain.runtime import Runtime
from magnetar_core.engine.aws import (
    LOCAL_HISTORY_MODULE,
    LOCAL_LAUNCHER_MODULE,
    LOCAL_SIGNAL_MODULE,
    authenticator_from_settings,
    aws_stores,
    commit_signal_of,
    function_keys_of,
    launcher_factory,
    launcher_from_settings,
    local_wakes_of,
    make_lambda_client,
    make_management_client,
    metrics_history,
    timer_starter,
)
from magnetar_core.engine.extensions import FunctionHosting, extensions
from magnetar_core.engine.messaging import messaging
from magnetar_core.engine.options import security_of, token_keys
from magnetar_core.ports import Stores
from magnetar_core.services.access import ProducerAccess
from magnetar_core.services.admin import Admin
from magnetar_core.services.admin.namespaces import NamespaceAdmin
from magnetar_core.services.admin.tenants import Tenants
from magnetar_core.services.admin.topics import TopicAdmin
from magnetar_core.services.authorization import Security
from magnetar_core.services.compaction import Compaction
from magnetar_core.services.functions import Functions
from magnetar_core.services.functions.dispatch import FunctionDispatcher
from magnetar_core.services.ingest import Ingest
from magnetar_core.services.namespaces import Namespaces
from magnetar_core.services.notify import Notify
from magnetar_core.services.produce import Producer
from magnetar_core.services.produce.many import ProduceMany
from magnetar_core.services.quotas import Quotas
from magnetar_core.services.schemas import SchemaPolicies, Schemas
from magnetar_core.services.stats import Stats
from magnetar_core.services.subscriptions import Subscriptions
from magnetar_core.services.tenancy.permissions import Permissions
from magnetar_core.services.throttling import Throttling
from magnetar_core.services.topics import Topics
from magnetar_core.services.triggers import Triggers
from magnetar_core.services.triggers.delivery import Delivery
from magnetar_core.services.triggers.fanout import FanOut
from magnetar_core.settings import Settings
from magnetar_wire.tokens import VerificationKeys

__all__ = [
    "LOCAL_HISTORY_MODULE",
    "LOCAL_LAUNCHER_MODULE",
    "LOCAL_SIGNAL_MODULE",
    "Engine",
    "authenticator_from_settings",
    "aws_stores",
    "commit_signal_of",
    "launcher_factory",
    "launcher_from_settings",
    "make_lambda_client",
    "make_management_client",
    "metrics_history",
    "security_of",
    "token_keys",
]


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
    function_dispatcher: FunctionDispatcher
    """Runs function targets' batches in the sandbox, with their role's token."""
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
        function_sandbox: ports.FunctionSandbox | None = None,
    ) -> Engine:
        """Wire the engine on AWS; ``clients`` is ``(dynamodb, s3)`` or ``(dynamodb, s3,
        stepfunctions)`` (made from settings when None or missing). Delay timers start
        through ``starter`` when given, else through the settings' state machine (none:
        delays off); jobs start through ``launcher`` when given, else the settings' one;
        tokens are verified with ``keys`` when given, else the settings' (``token_keys``);
        triggers deliver through ``targets`` (default: webhooks and Lambda) and are woken
        later through ``wakes`` (default: the settings' wake workflow, if any); channel
        notices go to ``connections`` (default: the settings' management API, if any);
        long-polls are woken through ``signal`` (default: ``commit_signal_of(settings)``);
        functions' batches run in ``function_sandbox`` (default: the settings' runner
        Lambda), with tokens signed by the settings' key (the SSM parameter read on the
        first batch)."""
        dynamodb, s3, *rest = clients or make_clients(settings)
        runtime = runtime or Runtime()
        timer_arn = settings.timer_state_machine_arn if starter is None else None
        wake_arn = settings.trigger_wake_state_machine_arn if wakes is None else None
        if timer_arn or wake_arn:
            sfn = rest[0] if rest else make_stepfunctions_client(settings)
            starter = timer_starter(sfn, timer_arn, settings, runtime) if timer_arn else starter
            wakes = TriggerWakes(sfn, wake_arn) if wake_arn else wakes
        if wakes is None:
            wakes = local_wakes_of(settings)
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
            settings,
            stores,
            runtime,
            starter,
            launcher,
            keys,
            targets,
            wakes,
            connections,
            signal,
            function_sandbox,
            function_keys_of(settings),
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
        function_sandbox: ports.FunctionSandbox | None = None,
        function_keys: Callable[[], VerificationKeys | None] | None = None,
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
        through the runtime's sleep); ``function_sandbox`` runs functions' batches (None:
        the settings' runner Lambda, else this process) with tokens signed by the secret key
        of ``function_keys()`` (None: ``keys``')."""
        runtime = runtime or Runtime()
        security = security_of(settings, stores, keys)
        hosting = FunctionHosting(
            function_sandbox, function_keys or (lambda: security.keys), security.enabled
        )
        if signal is None:
            signal = PollingSignal(runtime.sleep_ms)
        core = messaging(settings, stores, runtime, starter, connections, signal)
        ext = extensions(settings, stores, core, runtime, targets, wakes, hosting)
        topics, producer, subscriptions = core.topics, core.producer, core.subscriptions
        registry, namespaces = core.registry, core.namespaces
        stats = Stats(
            topics, stores.log, stores.cursors, stores.producer_state, stores.compaction,
            runtime.now_ms,
        )  # fmt: skip
        make_launcher = (lambda: launcher) if launcher is not None else launcher_factory(settings)
        schema_policies = SchemaPolicies(namespaces)
        namespace_admin = NamespaceAdmin(
            registry, stores.namespaces, stores.policies, stores.permissions, topics, runtime
        )
        topic_admin = TopicAdmin(topics, producer, core.dedup, subscriptions)
        return cls(
            runtime=runtime,
            topics=topics,
            producer=producer,
            subscriptions=subscriptions,
            stats=stats,
            admin=Admin(topics, subscriptions, stats, registry, ext.triggers, topic_admin),
            namespaces=namespaces,
            quotas=core.quotas,
            throttling=core.throttling,
            access=ProducerAccess(
                topics,
                producer,
                stores.producer_state,
                namespaces,
                core.dedup,
                runtime,
                settings.producer_lease_ms,
                settings.receive_max_wait_ms,
                settings.commit_max_attempts,
            ),
            entries=stores.entries,
            compaction=Compaction(
                topics, stores.compaction, make_launcher, runtime, log=stores.log
            ),
            tenants=Tenants(registry, stores.tenants, namespace_admin, runtime),
            namespace_admin=namespace_admin,
            permissions=Permissions(registry, stores.permissions, runtime),
            security=security,
            triggers=ext.triggers,
            delivery=ext.delivery,
            fanout=ext.fanout,
            functions=ext.functions,
            ingest=Ingest(
                producer,
                routes_from_json(settings.ingest_routes),
                runtime,
                entries_bucket=settings.entries_bucket,
            ),
            function_dispatcher=ext.function_dispatcher,
            schemas=Schemas(stores.schemas, schema_policies, runtime, settings.commit_max_attempts),
            schema_policies=schema_policies,
            notify=core.notify,
            produce_many=ProduceMany(producer, runtime.now_ms),
        )
