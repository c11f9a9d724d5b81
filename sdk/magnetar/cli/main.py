"""The ``magnetar`` command: pulsar-client's ``produce`` / ``consume`` verbs, and the verbs
of the service side (``local``, ``jobs``, ``perf``, ``chaos``).

    magnetar produce TOPIC -m TEXT [-m TEXT ...] [-n N] [-k KEY] [-p k=v,...]
    magnetar consume TOPIC -s SUB [-n N] [-t Exclusive|Shared|Failover|Key_Shared]
                     [-p Earliest|Latest]
                     (both: [--tls-trust-cert-path FILE] [--tls-allow-insecure], see
                     magnetar.cli.tls; the verbs: magnetar.cli.produce_consume)
    magnetar local [--port 8080] [--schedule] ...   (runs the embedded local stack)
    magnetar jobs run <compact-segments|expire|compact-topic> [--topic T] [--key value ...]
    magnetar perf produce|consume|idle|delayed|segments|expire|authorizer|triggers|scale ...
                     (benchmarks; scale: on a model of AWS, virtual time)
    magnetar chaos run|soak ...   (fault injection and soak on the embedded stack)
    magnetar invoke IngestFunction --event FILE   (a function AWS services invoke, run by the
                   local stack on an event, as ``sam local invoke``)
    magnetar admin clusters|tenants|namespaces|topics ...   (pulsar-admin's verbs; see
                   magnetar.cli.admin)
    magnetar functions create|update|get|list|delete ...   (pulsar-admin functions; see
                   magnetar.cli.functions)
    magnetar triggers create|update|get|list|delete TOPIC [NAME] ...   (push delivery to a
                   Lambda function or a webhook; see magnetar.cli.triggers)
    magnetar status | stop [--pid PID]   (the local services running here: list, stop)
    magnetar tokens create-secret-key|create-key-pair|create|show|validate ...
                     (``pulsar tokens``' verbs; needs ``pip install 'magnetar-client[tokens]'``)
    magnetar verify [--service-url URL] [--auth-params X] [--json] ...   (checks a deployment
                   end to end on topics of its own; see magnetar.cli.verify.cli)

``local``, ``jobs``, ``perf`` and ``chaos`` live with the service (magnetar_local,
magnetar_bench, magnetar_chaos: the
repository's root distribution); with only the client installed they say what to install
and exit with status 2.

The service URL of produce / consume is ``--service-url``, else ``$MAGNETAR_SERVICE_URL``,
else the running ``magnetar local`` (``make run``, any port: its record in ``.magnetar/services/``
of this directory or a parent), else ``http://127.0.0.1:8080`` (see ``magnetar.cli.service_url``);
a URL that was not given is said on stderr with where it came from. ``magnetar status`` lists
the local services running here; ``magnetar stop`` stops them. Their token (a service with
authentication on) is ``--auth-params`` (``token:<token>``, ``file:///path`` or the token),
else ``$MAGNETAR_AUTH_TOKEN``, else, when the service is the running ``magnetar local
--auth``, its ``.magnetar/local.token``; else none is sent.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Each verb imports its implementation when it runs (below, and in the verbs' own modules):
# a ``magnetar admin ...`` call does not import produce / consume, the SDK's client or the
# service side, so every call starts in less CPU.

# verb -> (module, function(argv) -> status) of the service side, imported on use
SERVER_VERBS = {
    "local": ("magnetar_local.main", "run"),
    "jobs": ("magnetar_local.jobs", "run"),
    "perf": ("magnetar_bench.cli", "main"),
    "chaos": ("magnetar_chaos.cli", "main"),
}
# verb -> (module, function(argv) -> status) of the client's optional extras
EXTRA_VERBS = {"tokens": ("magnetar.cli.tokens", "main")}
EXTRA_HINT = (
    "`magnetar {verb}` needs {missing!r}, which is not installed here: install the client's "
    "`{verb}` extra, `pip install 'magnetar-client[{verb}]'` (from a checkout: "
    "`pip install './sdk[{verb}]'`; `make install` has it)."
)
INSTALL_HINT = (
    "`magnetar {verb}` needs {missing!r}, which is not installed here. The verb is part of the "
    "Magnetar service side ({package}); the client-only distribution (`pip install ./sdk`) has "
    "produce, consume, admin, functions, triggers, invoke, status, stop, tokens and verify.\nFrom a checkout "
    "of the repository: `make install`, or "
    "`pip install -e ./sdk -e '.[dev]'` (the service, its local stack, jobs and benchmarks)."
)


def _parser() -> argparse.ArgumentParser:
    from magnetar.cli import produce_consume
    from magnetar.cli.service_url import DEFAULT_SERVICE_URL

    p = argparse.ArgumentParser(prog="magnetar", description="Magnetar command-line client")
    p.add_argument("--version", action="version", version=f"magnetar {_version()}")
    sub = p.add_subparsers(dest="command", required=True)
    url_help = (
        "HTTP URL of the Magnetar API (default: $MAGNETAR_SERVICE_URL, else the running "
        f"`magnetar local` of this directory, else {DEFAULT_SERVICE_URL})"
    )
    produce_consume.add_verbs(sub, url_help)

    local = sub.add_parser("local", help="run the Magnetar service locally (service side)")
    local.add_argument("rest", nargs=argparse.REMAINDER, help="arguments for magnetar_local")

    perf = sub.add_parser(
        "perf", help="benchmarks on the embedded stack, or on a model of AWS (scale; service side)"
    )
    perf.add_argument(
        "rest",
        nargs=argparse.REMAINDER,
        help="produce|consume|idle|delayed|segments|expire|authorizer|triggers|scale [-n N] ...",
    )

    chaos = sub.add_parser("chaos", help="fault injection and soak runs (service side)")
    chaos.add_argument("rest", nargs=argparse.REMAINDER, help="run|soak [--messages N] ...")

    functions = sub.add_parser("functions", help="Pulsar Functions: create|update|get|list|delete")  # fmt: skip
    functions.add_argument("rest", nargs=argparse.REMAINDER, help="create --py f.py --classname m.C --inputs T ...")  # fmt: skip
    triggers = sub.add_parser("triggers", help="a topic's triggers: create|update|get|list|delete")  # fmt: skip
    triggers.add_argument("rest", nargs=argparse.REMAINDER, help="create TOPIC NAME --lambda F | --webhook URL ...")  # fmt: skip
    admin = sub.add_parser("admin", help="pulsar-admin's clusters, tenants, namespaces, topics verbs")  # fmt: skip
    admin.add_argument("rest", nargs=argparse.REMAINDER, help="tenants list | namespaces create T/NS | ...")  # fmt: skip
    verify = sub.add_parser("verify", help="check a deployment end to end (a table of what held)")
    verify.add_argument("rest", nargs=argparse.REMAINDER, help="[--service-url URL] [--auth-params X] [--json] ...")  # fmt: skip
    tokens = sub.add_parser("tokens", help="create and check tokens, as `pulsar tokens`")
    tokens.add_argument("rest", nargs=argparse.REMAINDER, help="create-secret-key|create|...")

    sub.add_parser("status", help="the local services running here (this folder or a parent)")
    stop = sub.add_parser("stop", help="stop the local services running here (SIGTERM)")
    stop.add_argument("--pid", type=int, help="only the service of this pid")

    invoke = sub.add_parser("invoke", help="invoke IngestFunction with an event (local stack)")
    invoke.add_argument("rest", nargs=argparse.REMAINDER, help="FUNCTION --event FILE")
    jobs = sub.add_parser("jobs", help="run a maintenance job now (service side)")
    jobs.add_argument("rest", nargs=argparse.REMAINDER, help="run <job> [--topic T] ... | list")
    return p


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("magnetar-client")
    except PackageNotFoundError:  # a checkout on sys.path, not installed
        return "(not installed)"


def _run_server_verb(verb: str, rest: list[str]) -> int:
    """Run ``verb`` of the service side with ``rest``; status 2 and an install hint on stderr
    when the service side (or one of its dependencies) is not installed."""
    module_name, function = SERVER_VERBS[verb]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        package = module_name.split(".")[0]
        print(INSTALL_HINT.format(verb=verb, package=package, missing=e.name), file=sys.stderr)
        return 2
    result = getattr(module, function)(rest)
    return result if isinstance(result, int) else 0


def _run_extra_verb(verb: str, rest: list[str]) -> int:
    """Run ``verb`` of a client extra with ``rest``; status 2 and an install hint on stderr
    when the extra's libraries are missing."""
    module_name, function = EXTRA_VERBS[verb]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        print(EXTRA_HINT.format(verb=verb, missing=e.name), file=sys.stderr)
        return 2
    return int(getattr(module, function)(rest))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``magnetar`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] and argv[0] in SERVER_VERBS:  # everything after the verb is the server's
        return _run_server_verb(argv[0], argv[1:])
    if argv[:1] == ["admin"]:
        from magnetar.cli.admin.command import main as admin_main

        return admin_main(argv[1:])
    if argv[:1] == ["verify"]:
        from magnetar.cli.verify.cli import main as verify_main

        return verify_main(argv[1:])
    if argv[:1] == ["functions"]:
        from magnetar.cli.functions import main as functions_main

        return functions_main(argv[1:])
    if argv[:1] == ["triggers"]:
        from magnetar.cli.triggers import main as triggers_main

        return triggers_main(argv[1:])
    if argv[:1] == ["invoke"]:
        from magnetar.cli.invoke import run as invoke_run

        return invoke_run(argv[1:])
    if argv[:1] and argv[0] in EXTRA_VERBS:
        return _run_extra_verb(argv[0], argv[1:])
    args = _parser().parse_args(argv)
    if args.command in ("status", "stop"):
        from magnetar.cli.local_services import status, stop

        return status() if args.command == "status" else stop(args.pid)
    from magnetar.cli import produce_consume
    from magnetar.cli.service_url import service_for_command

    service = service_for_command(args.service_url)
    if service is None:
        return 2
    try:
        return produce_consume.VERBS[args.command](args, service)
    except Exception as e:
        import magnetar

        if isinstance(e, magnetar.PulsarException | ValueError):
            print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
            if isinstance(e, magnetar.ConnectError):
                print(produce_consume.unreachable_hint(service), file=sys.stderr)
            return 1
        raise


if __name__ == "__main__":
    sys.exit(main())
