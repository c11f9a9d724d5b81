"""LocalStack: the whole embedded stack (emulator + provisioning + gateway) as one object."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import boto3

from magnetar_core.adapters.aws.clients import session_with
from magnetar_core.adapters.targets import LocalFunctions, Targets, WebhookTarget
from magnetar_local import commit_signal
from magnetar_local.auth import LocalAuth
from magnetar_local.emulator import FAKE_CREDENTIALS, REGION, Emulator
from magnetar_local.events import LambdaContext
from magnetar_local.function_sandbox import SubprocessSandbox
from magnetar_local.function_url import front_door_function, template_value
from magnetar_local.functions import FunctionWatcher
from magnetar_local.gateway import Gateway
from magnetar_local.handler_process import (
    EngineOverrides,
    HandlerProcess,
    SharedClients,
    local_environment,
)
from magnetar_local.history import LocalHistory
from magnetar_local.journal import lock_data_dir
from magnetar_local.lambda_api import LambdaInvokeApi, invocable_functions
from magnetar_local.lambda_mirror import LambdaMirror
from magnetar_local.metrics import engine_backlog
from magnetar_local.notify import NoticeFeeder, NotifyServer
from magnetar_local.provision import provision
from magnetar_local.readiness import StackError, await_ready, probe_headers
from magnetar_local.template import DEFAULT_TEMPLATE, LocalTemplate
from magnetar_local.tls import ListenerTls
from magnetar_local.triggers import TriggerDriver, topics_with_triggers

LOCAL_PARAMETERS = {"AuthenticationEnabled": "false", "TokenKeyParameter": ""}
"""Template parameters of the local stack unless overridden: authentication off, as Pulsar
standalone, and no SSM key parameter (``magnetar local --auth`` uses a key file)."""


class LocalStack:
    """Emulator + resources from template.yaml + HTTP gateway running the real handlers.

    Usage: ``with LocalStack().start() as stack: requests.get(stack.url + ...)``.
    ``parameters`` override template parameters (``LOCAL_PARAMETERS`` by default).
    After ``start``: ``url`` (gateway), ``aws_endpoint_url`` (emulator), ``environment``
    (what the handlers see in os.environ), ``session`` / ``client(name)`` (boto3 on the
    emulator), ``template`` (the resolved template). ``start`` changes ``os.environ`` of
    this process (the handlers run in it); ``stop`` restores it. With ``auth`` the handlers
    authenticate every request (``magnetar local --auth``) and the readiness probe sends
    ``auth.token``; without it authentication is off, whatever template.yaml's defaults say.
    Triggers run in-process (``triggers``, a ``TriggerDriver`` woken by commits); Lambda
    targets are the handlers registered in ``functions`` (``magnetar local --function``);
    Pulsar Functions (``magnetar functions create``) run in-process too. ``front_door``:
    ``http-api`` or ``function-url`` (``magnetar_local.function_url``; else ValueError).
    ``data_dir``: keep the emulator's state there (``magnetar_local.durable``; held by this
    stack while it runs, ``DataDirInUse`` if another holds it); None keeps it in memory.
    ``overrides``: engine settings set over the template's (``EngineOverrides``).
    """

    def __init__(
        self,
        template_path: Path | str = DEFAULT_TEMPLATE,
        stack_name: str = "magnetar",
        region: str = REGION,
        auth: LocalAuth | None = None,
        parameters: dict[str, str] | None = None,
        functions: LocalFunctions | None = None,
        front_door: str = "http-api",
        commit_signal: str = "local",
        tls: ListenerTls | None = None,
        data_dir: Path | None = None,
        overrides: EngineOverrides | None = None,
    ) -> None:
        self.front_door = front_door
        self.overrides = overrides or EngineOverrides()
        """Engine settings set over the template's (``magnetar local``'s options)."""
        self.tls = tls
        """TLS on the gateway's listener (``magnetar local --tls-cert``; None: plain HTTP)."""
        self.data_dir = data_dir
        self._data_lock: int | None = None
        self._lambda_mirror = LambdaMirror()
        self.functions = LocalFunctions(
            functions.handlers() if functions is not None else None,
            on_register=self._lambda_mirror.announce,
        )
        """The local functions (also functions of the emulator's Lambda: ``lambda_mirror``)."""
        self.commit_signal = commit_signal
        """``COMMIT_SIGNAL`` of the handlers: ``local`` (a commit wakes long-polls) or
        ``poll`` (they poll the head, as on Lambda: ``magnetar perf latency --signal poll``)."""
        self.triggers: TriggerDriver | None = None
        self.function_sandbox: SubprocessSandbox | None = None
        """Where Pulsar Functions' batches run: a runner process without AWS credentials."""
        self.notify: NotifyServer | None = None
        """The notification channel (``magnetar_local.notify``; its ``url`` is NOTIFY_URL)."""
        self._notices: NoticeFeeder | None = None
        self.template = LocalTemplate(
            template_path,
            stack_name=stack_name,
            region=region,
            parameters={
                **LOCAL_PARAMETERS,
                "FrontDoor": template_value(front_door),
                **(parameters or {}),
            },  # fmt: skip
        )
        self.region = region
        self.auth = auth
        self.emulator: Emulator | None = None
        self.gateway: Gateway | None = None
        self.history: LocalHistory | None = None
        """The console's metrics history (``magnetar_local.history``), after ``start``."""
        self.environment: dict[str, str] = {}
        self._process = HandlerProcess()
        self._session: boto3.Session | None = None
        self._session_lock = threading.Lock()

    # ------------------------------------------------------------------ lifecycle
    def start(
        self,
        gateway_port: int = 0,
        emulator_port: int = 0,
        host: str = "127.0.0.1",
        ready_timeout_s: float = 60.0,
    ) -> LocalStack:
        """Start everything; ``0`` ports are picked free. Blocks until the gateway is ready.

        Ready means ``GET /admin/v2/brokers/health`` answers 200 ``ok`` when the admin
        handler exists, else that the gateway accepts connections. Raises StackError,
        EmulatorError, or OSError (e.g. the gateway port is taken); on failure everything
        started so far is stopped.
        """
        try:
            if self.data_dir is not None:
                self._data_lock = lock_data_dir(self.data_dir)
            self.emulator = Emulator(host=host, port=emulator_port, data_dir=self.data_dir)
            self.emulator.start(timeout_s=ready_timeout_s)
            self.notify = NotifyServer(host=host).start()
            provision(self.template, self.session, self.emulator.url)
            self._lambda_mirror.connect(self.client("iam"), self.client("lambda"))
            environment = local_environment(
                self.aws_endpoint_url, self.region, self.notify.url, self.commit_signal,
                self.auth, self.overrides,
            )  # fmt: skip
            self.environment = self._process.enter(self.template, environment)
            from magnetar_local.tenancy import initialize_cluster

            initialize_cluster(self.client("dynamodb"), self.environment)
            self.gateway = Gateway(
                self.template.routes,
                self.template.functions,
                host=host,
                port=gateway_port,
                region=self.region,
                account_id=self.template.account_id,
            )
            self.gateway.loader.container_context = SharedClients().container
            self.gateway.function_url = front_door_function(self.front_door)
            self.gateway.tls = self.tls
            self.gateway.lambda_api = LambdaInvokeApi(
                self.gateway.loader,
                invocable_functions(self.template),
                self.region,
                self.template.account_id,
            )
            self.gateway.start()
            self._start_triggers()
            self._start_notices()
            await_ready(self.gateway, ready_timeout_s, probe_headers(self.auth))
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, at_once: bool = False) -> None:
        """Stop the gateway and the emulator, restore os.environ and sys.path (idempotent).
        ``at_once``: the emulator is killed (``Emulator.stop``): for a process that ends
        next and has quieted the handlers still serving requests (``magnetar local``)."""
        triggers, self.triggers = self.triggers, None
        if triggers is not None:
            commit_signal.WAKES.remove(triggers)
            triggers.stop()
        sandbox, self.function_sandbox = self.function_sandbox, None
        if sandbox is not None:
            sandbox.close()
        notices, self._notices = self._notices, None
        if notices is not None:
            notices.stop()
        notify, self.notify = self.notify, None
        if notify is not None:
            notify.stop()
        history, self.history = self.history, None
        if history is not None:
            history.stop()
        gateway, self.gateway = self.gateway, None
        if gateway is not None:
            gateway.stop()
        emulator, self.emulator = self.emulator, None
        if emulator is not None:
            emulator.stop(at_once=at_once)
        data_lock, self._data_lock = self._data_lock, None
        if data_lock is not None:
            os.close(data_lock)  # after the emulator's end: its journal is closed
        self._process.restore()

    def __enter__(self) -> LocalStack:
        return self if self.gateway is not None else self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    # ------------------------------------------------------------------ accessors
    @property
    def url(self) -> str:
        """The gateway's base URL, e.g. ``http://127.0.0.1:8080`` (no trailing slash)."""
        return self._running_gateway().url

    @property
    def aws_endpoint_url(self) -> str:
        """The emulator's endpoint URL (what handlers get as AWS_ENDPOINT_URL)."""
        if self.emulator is None:
            raise StackError("the local stack is not running")
        return self.emulator.url

    @property
    def session(self) -> boto3.Session:
        """The boto3 session with the emulator's fake credentials and region: one per stack,
        on the process's shared botocore data loader (a new session read botocore's endpoint
        data again: ~70 ms of CPU for each client the stack and its tests made)."""
        with self._session_lock:
            if self._session is None:
                self._session = session_with(
                    self.region,
                    aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
                    aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                    aws_session_token=FAKE_CREDENTIALS["AWS_SESSION_TOKEN"],
                )
            return self._session

    def client(self, service: str, **kwargs: Any) -> Any:
        """A boto3 client for ``service`` on the emulator (a new one each call)."""
        session = self.session
        with self._session_lock:  # a boto3 session makes one client at a time
            return session.client(service, endpoint_url=self.aws_endpoint_url, **kwargs)

    def resource(self, service: str, **kwargs: Any) -> Any:
        """A boto3 resource for ``service`` on the emulator."""
        session = self.session
        with self._session_lock:
            return session.resource(service, endpoint_url=self.aws_endpoint_url, **kwargs)

    def create_namespaces(self, *namespaces: str) -> None:
        """Create each ``tenant/namespace`` (and its tenant) unless it exists, through the
        gateway's admin routes: topics are created only inside an existing namespace."""
        from magnetar_local.tenancy import ensure_namespaces_at

        ensure_namespaces_at(self.url, *namespaces)

    def name(self, logical_id: str) -> str:
        """Physical name of a template resource, e.g. ``name("TopicsTable") == "magnetar-topics"``."""
        return self.template.physical_name(logical_id)

    # ------------------------------------------------------------------ internals
    def _running_gateway(self) -> Gateway:
        if self.gateway is None:
            raise StackError("the local stack is not running")
        return self.gateway

    def _start_triggers(self) -> None:
        """The trigger driver on an engine of its own (webhooks and ``functions``),
        watching the gateway's answers."""
        from magnetar_core.engine import Engine
        from magnetar_core.settings import Settings

        settings = Settings.from_env(self.environment)
        webhook = WebhookTarget(allow_private=settings.trigger_private_webhooks)
        # user code runs as on AWS: in a runner process that reaches only the gateway
        self.function_sandbox = SubprocessSandbox(self.url, [p for p in sys.path if p])
        engine = Engine.build(
            settings,
            targets=Targets(webhook, functions=self.functions),
            function_sandbox=self.function_sandbox,
        )
        self.triggers = TriggerDriver(engine).start()
        commit_signal.WAKES.add(self.triggers)  # handlers' wakes (magnetar_local.commit_signal)
        if self.data_dir is not None:  # restored triggers: their routes were not seen here
            self.triggers.resume(
                topics_with_triggers(self.client("dynamodb"), settings.topics_table)
            )
        gateway = self._running_gateway()
        gateway.metrics.backlog_of = engine_backlog(lambda: Engine.build(settings))
        self.history = LocalHistory(gateway.metrics.recent_topics, gateway.metrics.backlog_of)
        gateway.metrics.listeners.append(self.history.record)
        self.history.start()
        self._running_gateway().observers.append(self.triggers.observe)
        self._running_gateway().observers.append(FunctionWatcher(self.triggers).observe)

    def _start_notices(self) -> None:
        """The channel's function behind the notification server, and the produce answers
        feeding its notices (an engine of its own, posting to the server's connections)."""
        from magnetar_core.api.metrics import emitting
        from magnetar_core.engine import Engine
        from magnetar_core.settings import Settings

        gateway, server = self._running_gateway(), self.notify
        if server is None or not gateway.loader.available("NotifyFunction"):
            return
        spec = gateway.loader.functions["NotifyFunction"]

        def invoke(event: dict) -> dict:  # its EMF records to the gateway's, not stdout
            with (
                emitting(gateway.metrics.record),
                gateway.loader.lease("NotifyFunction") as handler,
            ):
                return handler(event, LambdaContext(spec.name, spec.memory_mb, spec.timeout_s))

        server.invoke = invoke
        if table := self.environment.get("NOTIFY_TABLE"):  # connections of a killed service
            server.disconnect_stale(self.client("dynamodb"), table)
        engine = Engine.build(Settings.from_env(self.environment), connections=server)
        self._notices = NoticeFeeder(engine, server)
        gateway.observers.append(self._notices.observe)
