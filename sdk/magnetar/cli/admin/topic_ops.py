"""``magnetar admin topics``: pulsar-admin's topic verbs.

    magnetar admin topics terminate TOPIC [--output json]
    magnetar admin topics partitioned-terminate TOPIC [--output json]
    magnetar admin topics unload TOPIC
    magnetar admin topics truncate TOPIC
    magnetar admin topics update-partitioned-topic TOPIC -p N

``terminate`` prints the topic's last message id (``LEDGER:ENTRY:PARTITION:BATCH``; one line
``PARTITION  ID`` per partition for ``partitioned-terminate``), or the service's JSON with
``--output json``. The other verbs print nothing, as pulsar-admin. ``terminate`` is for a
non-partitioned topic or one partition; ``partitioned-terminate`` closes every partition.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from magnetar._topics import parse_topic
from magnetar.cli.admin import output as out
from magnetar.cli.admin.names import topic_arg

Call = Callable[..., Any]
VERBS = frozenset(
    {"terminate", "partitioned-terminate", "unload", "truncate", "update-partitioned-topic"}
)


def add_verbs(topics: Any) -> None:
    """Add the verbs to ``magnetar admin topics``' subparsers."""
    for name, help_text in (
        ("terminate", "no more produce; prints the last message id"),
        ("partitioned-terminate", "terminate every partition of a partitioned topic"),
    ):
        v = topics.add_parser(name, help=help_text)
        v.add_argument("topic", type=topic_arg)
        out.add_output(v)
    topics.add_parser("unload", help="drop the serving container's cached state").add_argument("topic", type=topic_arg)  # fmt: skip
    topics.add_parser("truncate", help="move every subscription to the end").add_argument("topic", type=topic_arg)  # fmt: skip
    update = topics.add_parser("update-partitioned-topic", help="grow a partitioned topic")
    update.add_argument("topic", type=topic_arg)
    update.add_argument("-p", "--partitions", type=int, required=True)


def run(args: argparse.Namespace, call: Call) -> str | None:
    """Do the verb with ``call`` (JSON requests); returns what to print (None: nothing).
    Raises PulsarException, ValueError (a bad topic name)."""
    topic = f"/admin/v2/{parse_topic(args.topic).path()}"
    v = args.verb
    if v == "terminate":
        last = call("POST", f"{topic}/terminate")
        return json.dumps(last, indent=2) if args.output == "json" else last["messageId"]
    if v == "partitioned-terminate":
        lasts = call("POST", f"{topic}/terminate/partitions")
        if args.output == "json":
            return json.dumps(lasts, indent=2, sort_keys=True)
        return "\n".join(f"{i}  {lasts[i]['messageId']}" for i in sorted(lasts, key=int)) or None
    method, path, body = {
        "unload": ("PUT", f"{topic}/unload", None),
        "truncate": ("DELETE", f"{topic}/truncate", None),
        "update-partitioned-topic": ("POST", f"{topic}/partitions", args.partitions if v == "update-partitioned-topic" else None),
    }[v]  # fmt: skip
    call(method, path, body)
    return None
