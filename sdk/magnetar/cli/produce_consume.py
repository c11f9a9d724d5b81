"""pulsar-client's ``magnetar produce`` and ``magnetar consume``: their flags, and sending or
receiving the messages with a ``Client`` of the service found (``magnetar.cli.service_url``).

    magnetar produce TOPIC -m TEXT [-m TEXT ...] [-n N] [-k KEY] [-p k=v,...]
    magnetar consume TOPIC -s SUB [-n N] [-t Exclusive|Shared|Failover|Key_Shared]
                     [-p Earliest|Latest]
"""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta
from typing import Any

from magnetar.cli.service_url import AUTH_PARAMS_HELP, ServiceUrl, auth_token
from magnetar.cli.tls import add_tls_options

_TYPES = {"Exclusive": "Exclusive", "Shared": "Shared", "Failover": "Failover",
          "Key_Shared": "KeyShared", "KeyShared": "KeyShared"}  # fmt: skip


def add_verbs(sub: Any, url_help: str) -> None:
    """The ``produce`` and ``consume`` parsers."""
    prod = sub.add_parser("produce", help="produce messages to a topic")
    prod.add_argument("topic")
    prod.add_argument("-m", "--messages", action="append", required=True,
                      help="message text; repeat, or separate several with commas")  # fmt: skip
    prod.add_argument("-n", "--num-produce", type=int, default=1,
                      help="how many times to send the message(s) (default 1)")  # fmt: skip
    prod.add_argument("-k", "--key", help="partition key of every message")
    prod.add_argument("-p", "--properties", help="properties, comma-separated key=value")
    prod.add_argument("-s", "--separator", default=",", help="message separator (default ,)")
    prod.add_argument("--deliver-after-ms", type=int, default=None,
                      help="delayed delivery: deliver this many ms after sending "
                           "(Shared / Key_Shared subscriptions)")  # fmt: skip
    prod.add_argument("--deliver-at", type=int, default=None,
                      help="delayed delivery: deliver at this epoch time in ms")  # fmt: skip
    prod.add_argument("--service-url", help=url_help)
    prod.add_argument("--auth-params", help=AUTH_PARAMS_HELP)
    add_tls_options(prod, client_name=True)

    cons = sub.add_parser("consume", help="consume messages from a subscription")
    cons.add_argument("topic")
    cons.add_argument("-s", "--subscription-name", required=True)
    cons.add_argument("-n", "--num-messages", type=int, default=1,
                      help="messages to consume, 0 for no limit (default 1)")  # fmt: skip
    cons.add_argument("-t", "--subscription-type", choices=sorted(_TYPES), default="Exclusive")
    cons.add_argument("-p", "--subscription-position", choices=["Earliest", "Latest"],
                      default="Latest")  # fmt: skip
    cons.add_argument("--timeout", type=float, default=None,
                      help="stop after this many seconds without a message")  # fmt: skip
    cons.add_argument("--service-url", help=url_help)
    cons.add_argument("--auth-params", help=AUTH_PARAMS_HELP)
    add_tls_options(cons, client_name=True)


def _client(service: ServiceUrl, args: argparse.Namespace):  # noqa: ANN202
    """A ``Client`` of ``service`` with the command's token and TLS options."""
    import magnetar

    token = auth_token(args.auth_params, service)
    auth = magnetar.AuthenticationToken(token) if token else None
    return magnetar.Client(
        service.url, authentication=auth, tls_trust_certs_file_path=args.tls_trust_cert_path,
        tls_allow_insecure_connection=args.tls_allow_insecure,
    )  # fmt: skip


def unreachable_hint(service: ServiceUrl) -> str:
    """What to do when nothing answers at ``service`` (printed after the error)."""
    return (
        f"No Magnetar service answers at {service.url} (from {service.source}). Start one "
        "with `make run` (or `.venv/bin/magnetar local --port PORT`) in this directory, or "
        "say where it runs: --service-url URL or MAGNETAR_SERVICE_URL=URL."
    )


def produce(args: argparse.Namespace, service: ServiceUrl) -> int:
    texts = [t for m in args.messages for t in m.split(args.separator)]
    props = None
    if args.properties:
        props = dict(kv.split("=", 1) for kv in args.properties.split(",") if "=" in kv)
    client = _client(service, args)
    try:
        producer = client.create_producer(args.topic)
        count = 0
        delay = {"deliver_at": args.deliver_at}
        if args.deliver_after_ms is not None:
            delay = {"deliver_after": timedelta(milliseconds=args.deliver_after_ms)}
        for _ in range(args.num_produce):
            for text in texts:
                producer.send(text.encode(), properties=props, partition_key=args.key, **delay)
                count += 1
        print(f"{count} messages successfully produced")
    finally:
        client.close()
    return 0


def consume(args: argparse.Namespace, service: ServiceUrl) -> int:
    import magnetar

    client = _client(service, args)
    count = 0
    try:
        consumer = client.subscribe(
            args.topic, args.subscription_name,
            consumer_type=magnetar.ConsumerType[_TYPES[args.subscription_type]],
            initial_position=magnetar.InitialPosition[args.subscription_position],
        )  # fmt: skip
        timeout = None if args.timeout is None else int(args.timeout * 1000)
        while args.num_messages <= 0 or count < args.num_messages:
            try:
                msg = consumer.receive(timeout)
            except magnetar.Timeout:
                break
            key = msg.partition_key() or "null"
            props = ", ".join(f"{k}={v}" for k, v in msg.properties().items())
            content = msg.data().decode("utf-8", "replace")
            print(f"----- got message -----\nkey:[{key}], properties:[{props}], content:{content}")
            consumer.acknowledge(msg)
            count += 1
    except KeyboardInterrupt:
        pass
    finally:
        client.close()
        print(f"{count} messages successfully consumed")
    if args.num_messages > 0 and count < args.num_messages:
        print(f"error: timed out after {count} of {args.num_messages} messages", file=sys.stderr)
        return 1
    return 0


VERBS = {"produce": produce, "consume": consume}
"""verb -> what runs it (the parsed arguments, the service): the exit status."""
