"""pytest fixtures for the embedded stack (imported by tests/conftest.py).

``local_stack``: one LocalStack per test session (per xdist worker), on free ports.
``aws_clients``: boto3 ``dynamodb``, ``s3`` and ``stepfunctions`` clients on its emulator,
made once per session from one boto3 session (a client costs ~50-100 ms to build).
``engine_clients``: the boto3 clients ``Engine.build`` makes, made once per session.
``spark``: one local SparkSession per test session (starting one costs ~10 s).
``jobs_in_process``: maintenance jobs the stack launches run in this process, on ``spark``.
``secured_gateway``: the handlers with authentication on, over ``local_stack``'s emulator
(``magnetar_local.secured``), one per session.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
import threading
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from magnetar_local.spark_jvm import TEST_JVM_OPTIONS, TEST_SPARK_CONF, java_options
from magnetar_local.stack import LocalStack


@dataclass(frozen=True)
class AwsClients:
    """boto3 clients bound to the local emulator."""

    dynamodb: Any
    s3: Any
    stepfunctions: Any


@pytest.fixture(scope="session")
def local_stack() -> Iterator[LocalStack]:
    """The running local stack (emulator + tables/bucket/state machines + gateway). At the
    session's end the handlers' long-polls still in flight (a consumer a test left open)
    end against the stopped emulator: expected then, as when ``magnetar local`` stops, so
    their storage errors are not logged as faults (no test runs after it in this
    process)."""
    stack = LocalStack().start()
    try:
        yield stack
    finally:
        from magnetar_local.main import quiet_handlers

        quiet_handlers()
        stack.stop()


@pytest.fixture(scope="session")
def aws_clients(local_stack: LocalStack) -> AwsClients:
    """boto3 clients on the local stack's emulator, from one boto3 session."""
    session = local_stack.session
    endpoint = local_stack.aws_endpoint_url
    return AwsClients(
        dynamodb=session.client("dynamodb", endpoint_url=endpoint),
        s3=session.client("s3", endpoint_url=endpoint),
        stepfunctions=session.client("stepfunctions", endpoint_url=endpoint),
    )


@pytest.fixture(scope="session")
def engine_clients(local_stack: LocalStack) -> tuple[Any, Any, Any]:
    """``(dynamodb, s3, stepfunctions)`` on the emulator, made once as ``Engine.build``
    makes its own (same config, requests counted): pass ``clients=engine_clients`` to
    ``Engine.build`` in tests. boto3 clients are thread-safe; engines keep their own caches.
    """
    from magnetar_core.adapters.aws.clients import make_engine_clients
    from magnetar_core.settings import Settings

    return make_engine_clients(Settings.from_env(local_stack.environment))


@pytest.fixture(scope="session")
def secured_gateway(local_stack: LocalStack, engine_clients: tuple[Any, Any, Any]) -> Iterator[Any]:
    """A started ``SecuredGateway`` on the session's stack (superuser ``admin``)."""
    from magnetar_local.secured import SecuredGateway

    gateway = SecuredGateway(local_stack, engine_clients).start()
    try:
        yield gateway
    finally:
        gateway.stop()


def test_jvm_options() -> str:
    """``TEST_JVM_OPTIONS``, plus the virtualenv's class data sharing archive of Spark when
    ``make install`` built it (``magnetar_local.spark_jvm``: a JVM starts in half the CPU)."""
    return java_options(TEST_JVM_OPTIONS)


def spark_submit_args_for_tests() -> str:
    """``PYSPARK_SUBMIT_ARGS`` that give a spark-submit'ted job the tests' session's master
    (``local[1]``), JVM options and ``TEST_SPARK_CONF``. The master matters: a job that
    finds none takes ``local[*]`` and four shuffle partitions a core
    (``magnetar_jobs.common.spark_session``), more tasks for the same few rows."""
    confs = " ".join(f"--conf {key}={value}" for key, value in TEST_SPARK_CONF.items())
    return f'--master local[1] --driver-java-options "{test_jvm_options()}" {confs} pyspark-shell'


@pytest.fixture(scope="session")
def spark():
    """A local[1] SparkSession shared by the tests of the run (of one xdist worker): one task
    thread, as four workers share two cores (fewer Python workers than local[2]).

    Jobs run in-process (``compact_topic.main(argv)``, ``InProcessJobLauncher``) find it
    as the active session instead of starting their own.
    """
    from pyspark.sql import SparkSession

    # Python workers run this interpreter (its packages), not whatever python3 is first on
    # the PATH (pyspark reads PYSPARK_PYTHON when the context starts).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.master("local[1]").appName("magnetar-tests")
    builder = builder.config("spark.driver.extraJavaOptions", test_jvm_options())
    for key, value in TEST_SPARK_CONF.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    sql_conf_to_tasks(session.sparkContext)
    yield session
    session.stop()


def sql_conf_to_tasks(context: Any) -> None:
    """Give the jobs this thread starts outside a SQL query's execution the tests' SQL
    settings (``TEST_SPARK_CONF``), as their local properties.

    A task reads SQL settings from its job's local properties only; a query's execution sets
    them from the session, but the jobs pyspark starts itself do not: a DataFrame's ``.rdd``
    (the expire load's cogroup), ``createDataFrame`` from a Python RDD, ``localCheckpoint``.
    Their tasks saw Spark's defaults, so they generated and compiled Java (Janino) for each
    projection, predicate and ordering they built despite ``NO_CODEGEN`` (measured on
    tests/e2e/test_expire_policies.py and tests/integration/test_compaction.py: 145 Janino
    compilations, 7 with these). What the tasks compute is the same. Local properties are
    per thread (a Python thread drives a JVM thread of its own): call this in each thread
    that runs jobs.
    """
    for key, value in TEST_SPARK_CONF.items():
        if key.startswith("spark.sql."):
            context.setLocalProperty(key, value)


class InProcessJobLauncher:
    """A JobLauncher that runs ``spark_glue/<job>.py``'s ``main(argv)`` in a thread of this
    process, on the test run's SparkSession, instead of a subprocess with its own JVM.

    Same arguments as ``LocalJobLauncher`` (``job_argv`` of the settings). With
    ``hold=True`` a run waits for ``release()`` before it starts working, so a test can
    look at it while it is RUNNING. ``status``/``wait``/``output`` as LocalJobLauncher's.
    """

    def __init__(self, settings: Any, hold: bool = False) -> None:
        self._settings = settings
        self._go = threading.Event()
        if not hold:
            self._go.set()
        self._lock = threading.Lock()
        self._threads: dict[str, threading.Thread] = {}
        self._codes: dict[str, int] = {}
        self._outputs: dict[str, str] = {}
        self.started: list[tuple[str, dict[str, str]]] = []

    def start(self, job: str, args: Mapping[str, str]) -> str:
        from magnetar_local.launcher import SCRIPTS, job_argv

        argv = job_argv(self._settings, job, args)  # raises UnknownJob
        main = importlib.import_module(SCRIPTS[job].removesuffix(".py")).main
        run_id = f"{job}-{uuid.uuid4().hex[:12]}"
        thread = threading.Thread(
            target=self._run, args=(run_id, main, argv), name=run_id, daemon=True
        )
        with self._lock:
            self.started.append((job, dict(args)))
            self._threads[run_id] = thread
        thread.start()
        return run_id

    def hold(self) -> None:
        """Make the next runs wait for ``release()`` before they start working."""
        self._go.clear()

    def release(self) -> None:
        """Let held runs (and every later one) go."""
        self._go.set()

    def _run(self, run_id: str, main: Any, argv: list[str]) -> None:
        from pyspark import SparkContext

        self._go.wait()
        if SparkContext._active_spark_context is not None:  # the test run's session
            sql_conf_to_tasks(SparkContext._active_spark_context)
        out = io.StringIO()
        code = 1
        try:
            with contextlib.redirect_stdout(out):
                summary = main(argv)
            code = 1 if getattr(summary, "details", {}).get("partitions_failed") else 0
        except BaseException as exc:  # noqa: BLE001 - a failed run is its exit code
            print(f"{type(exc).__name__}: {exc}", file=out)
        finally:
            with self._lock:
                self._codes[run_id] = code
                self._outputs[run_id] = out.getvalue()

    def status(self, run_id: str) -> str:
        """``RUNNING``, ``SUCCEEDED``, ``FAILED`` or ``UNKNOWN`` (not started here)."""
        with self._lock:
            if run_id not in self._threads:
                return "UNKNOWN"
            code = self._codes.get(run_id)
        return "RUNNING" if code is None else ("SUCCEEDED" if code == 0 else "FAILED")

    def wait(self, run_id: str, timeout_s: float | None = None) -> int:
        """Wait for a run; returns its exit code. Raises TimeoutError."""
        with self._lock:
            thread = self._threads[run_id]
        thread.join(timeout_s)
        if thread.is_alive():
            raise TimeoutError(f"{run_id} still running after {timeout_s} s")
        return self._codes[run_id]

    def output(self, run_id: str) -> str:
        """What a finished run printed (its summary lines, or the error)."""
        with self._lock:
            return self._outputs.get(run_id, "")


@pytest.fixture
def jobs_in_process(local_stack: LocalStack, spark: Any, monkeypatch: pytest.MonkeyPatch):
    """Make the stack's handlers launch maintenance jobs in this process; yields the
    ``InProcessJobLauncher`` they use (its ``hold()`` holds the next runs).

    Engines of handler containers already loaded get it as their launcher; containers
    loaded during the test make it with ``launcher_from_settings``, replaced here. Both are
    undone after the test.
    """
    from magnetar_core import engine as composition_root
    from magnetar_core.engine import aws as aws_root
    from magnetar_core.settings import Settings

    launcher = InProcessJobLauncher(Settings.from_env(local_stack.environment))
    # both names: launcher_factory (engine.aws) calls its own module's, not the re-export
    for module in (composition_root, aws_root):
        monkeypatch.setattr(module, "launcher_from_settings", lambda settings, glue=None: launcher)
    for engine in _handler_engines():
        monkeypatch.setattr(engine.compaction, "_launcher", launcher)
    yield launcher
    for engine in _handler_engines():  # containers loaded during the test made it theirs
        if engine.compaction._launcher is launcher:
            engine.compaction._launcher = None  # the next use makes the settings' one


def _handler_engines() -> list[Any]:
    """The engines of the handler containers loaded so far (``magnetar_fn_*`` modules)."""
    from magnetar_core.api.http import ContainerEngine
    from magnetar_core.engine import Engine

    modules = [m for name, m in list(sys.modules.items()) if name.startswith("magnetar_fn_")]
    values = [v for m in modules for v in vars(m).values()]
    engines = [v for v in values if isinstance(v, Engine)]
    engines += [v.built for v in values if isinstance(v, ContainerEngine) and v.built is not None]
    return [e for e in engines if e.compaction is not None]
