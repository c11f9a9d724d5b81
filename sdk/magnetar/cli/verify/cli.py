"""``magnetar verify``: a bounded end-to-end check of a deployment, with the public SDK and
plain HTTP (docs/admin-cli.md, "magnetar verify"; what each check proves:
docs/reliability.md, "Checking a deployment").

    magnetar verify [--service-url URL] [--auth-plugin P] [--auth-params X | --token X]
                    [--denied-auth-params X] [--namespace T/NS] [--timeout-seconds 120]
                    [--check-timeout-seconds 30] [--delay-ms 1500]
                    [--webhook-url URL] [--webhook-host H] [--webhook-port N] [--sequential]
                    [--json]

Every topic it makes is ``persistent://<namespace>/verify-<random>-<check>``, deleted at the
end. Exit status: 0 every check passed or was skipped with its reason; 1 one failed (or did
not run); 2 a usage error (nothing is sent).
"""

from __future__ import annotations

import argparse
import re
import secrets
import sys
import time
from collections.abc import Sequence

from magnetar.cli.admin.auth import AUTH_PLUGIN_HELP, authentication
from magnetar.cli.service_url import AUTH_PARAMS_HELP, service_for_command
from magnetar.cli.verify.context import Deadline, Service, VerifyContext, WebhookOptions
from magnetar.cli.verify.report import Report
from magnetar.cli.verify.runner import run_checks

NAMESPACE = re.compile(r"^[\w=:.-]+/[\w=:.-]+$")
EXIT_USAGE = 2


def _positive(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
    return value


def _namespace(text: str) -> str:
    if not NAMESPACE.match(text):
        raise argparse.ArgumentTypeError(f"a namespace is tenant/namespace, not {text!r}")
    return text


def _delay_ms(text: str) -> int:
    value = int(text)
    if not 0 < value <= 60_000:
        raise argparse.ArgumentTypeError(f"from 1 to 60000 ms, not {text}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="magnetar verify",
        description="Check a deployment end to end on topics of its own, then delete them; "
                    "one row per check, exit 0 only if every check held or was skipped with its reason.",
    )  # fmt: skip
    p.add_argument("--service-url", "--admin-url", dest="service_url",
                   help="HTTP URL of the Magnetar API (default: $MAGNETAR_SERVICE_URL, else the "
                        "running `magnetar local` of this directory, else http://127.0.0.1:8080)")  # fmt: skip
    p.add_argument("--auth-plugin", help=AUTH_PLUGIN_HELP)
    creds = p.add_mutually_exclusive_group()
    creds.add_argument("--auth-params", help=AUTH_PARAMS_HELP)
    creds.add_argument("--token", dest="auth_params", help="the same as --auth-params (a token)")
    p.add_argument("--denied-auth-params", metavar="TOKEN",
                   help="a token of a role with no grant on the namespace, for the 403 check "
                        "(token:<jwt>, file:///path or the token; unset: that check is skipped)")  # fmt: skip
    p.add_argument("--namespace", type=_namespace, default="public/default",
                   help="where the run's topics go (default public/default); the role needs "
                        "to administer it (tenant admin or superuser)")  # fmt: skip
    p.add_argument("--timeout-seconds", type=_positive, default=120.0,
                   help="bound of the whole run, cleanup aside (default 120)")  # fmt: skip
    p.add_argument("--check-timeout-seconds", type=_positive, default=30.0,
                   help="bound of each check (default 30)")  # fmt: skip
    p.add_argument("--delay-ms", type=_delay_ms, default=1500,
                   help="how far ahead the delayed message is due, rounded up to the tick (default 1500)")  # fmt: skip
    p.add_argument("--webhook-url",
                   help="the URL the service calls for the trigger check, forwarding to this "
                        "machine's --webhook-port (default: the local server's own URL, used "
                        "only when the service runs on this machine)")  # fmt: skip
    p.add_argument("--webhook-host", default="127.0.0.1",
                   help="address the webhook server listens on (default 127.0.0.1)")  # fmt: skip
    p.add_argument("--webhook-port", type=int, default=0,
                   help="port of the webhook server (default 0: a free one)")  # fmt: skip
    p.add_argument("--sequential", action="store_true",
                   help="run the checks one after the other (default: at once, after the service check)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the report as JSON, for scripts")
    return p


def main(argv: Sequence[str]) -> int:
    """``magnetar verify ...``; returns the exit status (0 held, 1 failed, 2 usage)."""
    args = parser().parse_args(list(argv))  # SystemExit(2) on a usage error
    import magnetar

    service_url = service_for_command(args.service_url)
    if service_url is None:  # several local services here: which one is for the user
        return EXIT_USAGE
    try:
        auth = authentication(args.auth_plugin, args.auth_params, service_url)
        client = magnetar.Client(service_url.url, authentication=auth,
                                 operation_timeout_seconds=max(1, int(args.check_timeout_seconds)))  # fmt: skip
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    denied = None
    if args.denied_auth_params:
        denied = magnetar.AuthenticationToken(args.denied_auth_params.removeprefix("token:"))._headers()  # fmt: skip
    service = Service(service_url.url, lambda: auth._headers() if auth else {}, args.check_timeout_seconds)  # fmt: skip
    ctx = VerifyContext(
        client=client, service=service, namespace=args.namespace,
        run_id=secrets.token_hex(4), denied_headers=denied, delay_ms=args.delay_ms,
        webhook=WebhookOptions(args.webhook_host, args.webhook_port, args.webhook_url),
    )  # fmt: skip
    started = time.monotonic()
    try:
        results = run_checks(ctx, Deadline(args.timeout_seconds), args.check_timeout_seconds,
                             concurrent=not args.sequential)  # fmt: skip
    finally:
        client.close()
        service.close()
    report = Report(service_url.url, ctx.topic_prefix, tuple(results), round((time.monotonic() - started) * 1000))  # fmt: skip
    print(report.render_json() if args.json else report.render_table())
    return report.exit_status()
