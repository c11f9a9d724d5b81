"""``magnetar local``: run the embedded stack in the foreground until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import errno
import logging
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from magnetar_core.adapters.targets import LocalFunctions
from magnetar_local.auth import DEFAULT_SUPERUSER, LocalAuth
from magnetar_local.emulator import EmulatorError
from magnetar_local.handler_process import EngineOverrides
from magnetar_local.journal import DataDirInUse
from magnetar_local.readiness import StackError
from magnetar_local.stack import LocalStack
from magnetar_local.tls import ListenerTls
from magnetar_local.triggers import load_function

if TYPE_CHECKING:
    from magnetar_local.ticker import Ticker


def build_parser(prog: str = "magnetar local") -> argparse.ArgumentParser:
    """The command-line options of ``magnetar local``."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Run Magnetar locally: HTTP API, handlers and an AWS emulator whose state "
        "is kept in a data directory (--ephemeral: in memory).",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=8080,
        help="HTTP port of the local API (0 picks a free one; default 8080)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level of the gateway (DEBUG logs every request)",
    )
    keep = parser.add_mutually_exclusive_group()
    keep.add_argument(
        "--data-dir",
        type=Path,
        metavar="DIR",
        help="where the state (tenants, topics, messages, cursors, ...) is kept across stops "
        "and crashes (default .magnetar/data, or $MAGNETAR_HOME/data)",
    )
    keep.add_argument(
        "--ephemeral",
        action="store_true",
        help="keep the state in memory only: it is gone when the service stops",
    )
    parser.add_argument(
        "--schedule",
        action="store_true",
        help="run the maintenance jobs (expire, compact-segments) on template.yaml's schedules",
    )
    parser.add_argument(
        "--schedule-every",
        type=float,
        metavar="SECONDS",
        help="with --schedule: run every scheduled job this often instead (e.g. 60 to try it)",
    )
    parser.add_argument(
        "--auth",
        action="store_true",
        help="require a token on every request (off by default, as Pulsar standalone); the "
        "superuser's token is printed and written to .magnetar/local.token",
    )
    parser.add_argument(
        "--secret-key",
        type=Path,
        metavar="FILE",
        help="with --auth: the HS256 secret key file, created when missing "
        "(default .magnetar/secret.key)",
    )
    parser.add_argument(
        "--superuser-roles",
        default=DEFAULT_SUPERUSER,
        metavar="R1,R2",
        help=f"with --auth: the superuser roles; the first one's token is printed "
        f"(default {DEFAULT_SUPERUSER})",
    )
    parser.add_argument(
        "--anonymous-role",
        metavar="ROLE",
        help="with --auth: the role of requests without credentials (Pulsar's "
        "anonymousUserRole: exactly its grants); without it they are refused (401)",
    )
    parser.add_argument(
        "--htpasswd",
        type=Path,
        metavar="FILE",
        help="with --auth: Basic authentication's users, an htpasswd file of bcrypt, apr1 or "
        "crypt entries (Pulsar's AuthenticationProviderBasic)",
    )
    parser.add_argument("--oauth2-issuer", metavar="URL",
                        help="with --auth: the OAuth 2.0 issuer whose access tokens prove "
                        "roles (AuthenticationOauth2 clients; the role is the token's sub)")  # fmt: skip
    parser.add_argument("--oauth2-jwks", metavar="URL|FILE",
                        help="with --oauth2-issuer: its JWKS (default "
                        "<issuer>/.well-known/jwks.json)")  # fmt: skip
    parser.add_argument("--oauth2-audience", metavar="AUD",
                        help="with --oauth2-issuer: the aud access tokens must hold")  # fmt: skip
    parser.add_argument("--tls-cert", type=Path, metavar="FILE",
                        help="serve https:// with this PEM certificate (and --tls-key)")  # fmt: skip
    parser.add_argument("--tls-key", type=Path, metavar="FILE",
                        help="the private key of --tls-cert (PEM)")  # fmt: skip
    parser.add_argument(
        "--tls-trust-certs",
        type=Path,
        metavar="FILE",
        help="with --tls-cert: the CA bundle client certificates are verified with; with "
        "--auth a verified certificate's CN is the role (Pulsar's AuthenticationProviderTls)",
    )
    parser.add_argument(
        "--front-door",
        choices=["http-api", "function-url"],
        default="http-api",
        help="function-url: serve the API as template.yaml's FrontDoor=FunctionUrl does (one "
        "data-plane function gets function-URL events and checks tokens itself)",
    )
    parser.add_argument(
        "--delayed-delivery-release-grace-ms",
        type=int,
        metavar="MS",
        help="how long past its due time a delayed message whose timer was lost (the service "
        "was killed) waits for the dispatcher to release it (default: template.yaml's 30000)",
    )
    parser.add_argument(
        "--consumer-lease-ms",
        type=int,
        metavar="MS",
        help="how long a consumer not heard from keeps its unacknowledged messages before "
        "they are redelivered (default: template.yaml's 60000; the SDK heartbeats every 20 s)",
    )
    parser.add_argument(
        "--function",
        action="append",
        default=[],
        metavar="NAME=FILE.py:HANDLER",
        help="make a Python handler(event, context) the Lambda function NAME of triggers "
        "(repeatable); it gets the trigger's records batch and may return batchItemFailures",
    )
    return parser


def _load_functions(specs: Sequence[str]) -> LocalFunctions:
    """The ``--function`` handlers, loaded now; raises ValueError naming a bad one."""
    functions = LocalFunctions()
    for text in specs:
        name, handler = load_function(text)
        functions.register(name, handler)
    return functions


def _prepare_auth(args: argparse.Namespace) -> LocalAuth | None:
    """The stack's authentication from ``--auth`` (None without it); raises ValueError,
    InvalidKey, OSError (the caller says so and exits)."""
    if not args.auth:
        if args.secret_key is not None or args.superuser_roles != DEFAULT_SUPERUSER:
            raise ValueError("--secret-key and --superuser-roles need --auth")
        if any(v is not None for v in (args.anonymous_role, args.htpasswd, args.oauth2_issuer)):
            raise ValueError("--anonymous-role, --htpasswd and --oauth2-issuer need --auth")
        return None
    from magnetar_local.jobs import state_dir

    auth = LocalAuth.prepare(state_dir(), args.secret_key, args.superuser_roles.split(","))
    return auth.with_providers(
        args.anonymous_role, args.htpasswd, tls_client_auth=args.tls_trust_certs is not None,
        oauth2_issuer=args.oauth2_issuer, oauth2_jwks=args.oauth2_jwks,
        oauth2_audience=args.oauth2_audience,
    )  # fmt: skip


def _listener_tls(args: argparse.Namespace) -> ListenerTls | None:
    """TLS of the listener from ``--tls-cert/--tls-key/--tls-trust-certs`` (None: plain
    HTTP); raises ValueError for an incomplete set, OSError / ssl.SSLError for files that
    do not load."""
    if args.tls_cert is None and args.tls_key is None:
        if args.tls_trust_certs is not None:
            raise ValueError("--tls-trust-certs needs --tls-cert and --tls-key")
        return None
    if args.tls_cert is None or args.tls_key is None:
        raise ValueError("--tls-cert and --tls-key go together")
    tls = ListenerTls(args.tls_cert, args.tls_key, args.tls_trust_certs)
    tls.context()  # the files load, or the command says which does not now
    return tls


def _start_ticker(stack: LocalStack, every_s: float | None) -> Ticker:
    """A Ticker running the template's job schedules through the local launcher."""
    from dataclasses import replace

    from magnetar_core.settings import Settings
    from magnetar_local.jobs import state_dir
    from magnetar_local.launcher import LocalJobLauncher
    from magnetar_local.ticker import Ticker, schedules_from_template

    schedules = schedules_from_template(stack.template)
    if every_s:
        schedules = [replace(s, every_s=every_s) for s in schedules]
    settings = Settings.from_env(stack.environment)
    launcher = LocalJobLauncher(settings, log_dir=state_dir() / "jobs")
    for s in schedules:
        print(f"Scheduled: {s.job} every {s.every_s:g} s (logs in {launcher.log_dir})", flush=True)
    return Ticker(launcher, schedules).start()


def data_dir_of(args: argparse.Namespace) -> Path | None:
    """The data directory the options ask for: ``--data-dir``, None with ``--ephemeral``,
    else ``data`` in the state folder."""
    if args.ephemeral:
        return None
    if args.data_dir is not None:
        return args.data_dir.resolve()
    from magnetar_local.jobs import state_dir

    return (state_dir() / "data").resolve()


def quiet_handlers() -> None:
    """Long-polls still in flight end against the stopping emulator: expected when the
    command stops, so the handlers' storage errors are not logged as faults. Done only when
    a running service is stopped or a test session's shared stack at the session's end
    (the process ends next), not in ``LocalStack.stop`` nor when the start failed: in a
    test process either silenced the handlers' logger for every later test (an in-process
    ``magnetar local`` on a taken port did)."""
    from magnetar_core.api.http import SERVICE

    logging.getLogger(SERVICE).setLevel(logging.CRITICAL)


def before_exit() -> None:
    """The process ends next (a stopped ``magnetar local``): what is alive is frozen
    (``gc.freeze``), so the interpreter's collections at exit do not scan the whole heap of
    the handlers, boto3 and the engine again (a second of CPU and more on a loaded machine,
    for memory the exit frees anyway). Not done when the start failed: in a test process
    every later test would run with a frozen heap."""
    import gc

    gc.freeze()


def run(argv: Sequence[str] | None = None) -> int:
    """Start the stack, print where it runs, serve until interrupted; returns the exit code.

    0 after a clean stop, 1 when the stack cannot start (e.g. the port is taken), 2 for
    wrong options (``--secret-key`` without ``--auth``, an unreadable key file or htpasswd
    file, TLS files that do not load, a ``--function`` that does not load, a negative
    grace, a lease under 1 ms).
    """
    args = build_parser().parse_args(list(argv) if argv is not None else None)
    logging.basicConfig(
        level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("botocore").setLevel(logging.WARNING)
    try:
        tls = _listener_tls(args)
        auth = _prepare_auth(args)
        functions = _load_functions(args.function)
        overrides = EngineOverrides(args.delayed_delivery_release_grace_ms, args.consumer_lease_ms)
    except (ValueError, OSError) as error:  # InvalidKey is a ValueError, ssl.SSLError an OSError
        print(f"magnetar local: {error}", file=sys.stderr)
        return 2
    stop = threading.Event()
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, lambda *_: stop.set())
    data_dir = data_dir_of(args)
    stack = LocalStack(
        auth=auth, functions=functions, front_door=args.front_door, tls=tls, data_dir=data_dir,
        overrides=overrides,
    )  # fmt: skip
    served = False
    try:
        try:
            stack.start(gateway_port=args.port, host=args.host)
        except (OSError, EmulatorError, StackError, DataDirInUse) as error:
            hint = (
                f" (port {args.port} is in use: pick another with --port)"
                if getattr(error, "errno", None) == errno.EADDRINUSE
                else ""
            )
            print(f"magnetar local: cannot start: {error}{hint}", file=sys.stderr)
            return 1
        kept = "in memory" if data_dir is None else f"kept in {data_dir}"
        print(
            f"Magnetar is running at {stack.url} (AWS emulator at {stack.aws_endpoint_url}); "
            f"state is {kept}; Ctrl-C to stop",
            flush=True,
        )
        if auth is not None:
            print(
                f"Authentication is on. Superuser role '{auth.superuser_roles[0]}', token "
                f"(also in {auth.token_file}; secret key {auth.secret_key_file}):\n{auth.token}",
                flush=True,
            )
        from magnetar_local.jobs import remove_state, write_state

        state_file = write_state(stack, auth=auth is not None)
        ticker = _start_ticker(stack, args.schedule_every) if args.schedule else None
        try:
            stop.wait()
        finally:
            if ticker is not None:
                ticker.stop()
            remove_state(state_file)
            quiet_handlers()
        print("Stopping...", flush=True)
        served = True
        return 0
    finally:
        stack.stop(at_once=served)  # served: the handlers were quieted, the process ends
        if auth is not None:
            auth.remove_token_file()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if served:
            before_exit()
