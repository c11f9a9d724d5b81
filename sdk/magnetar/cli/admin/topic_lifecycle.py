"""``magnetar admin topics``: pulsar-admin's verbs to list, create, delete, measure and
compact topics.

    magnetar admin topics list T/NS [-o json]
    magnetar admin topics list-partitioned-topics T/NS [-o json]
    magnetar admin topics create TOPIC
    magnetar admin topics create-partitioned-topic TOPIC -p N             (--partitions)
    magnetar admin topics delete TOPIC [-f] [-d]                          (--force, --deleteSchema)
    magnetar admin topics delete-partitioned-topic TOPIC [-f] [-d]
    magnetar admin topics stats TOPIC [-o json]
    magnetar admin topics partitioned-stats TOPIC [--per-partition] [-o json]
    magnetar admin topics compact TOPIC
    magnetar admin topics compaction-status TOPIC [-w] [-o json]          (--wait-complete)

``stats`` prints the topic's counters as ``KEY VALUE`` rows (``compaction.*`` flattened),
then one row per subscription (and per partition for ``partitioned-stats
--per-partition``); ``-o json`` prints the service's TopicStats as they are. ``delete -d``
also deletes the topic's schema (none is no error). ``compact`` prints pulsar-admin's
"Topic compaction requested" line; ``compaction-status`` its status line, exiting 1 when
the last compaction failed; ``-w`` polls once a second until it no longer runs.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from magnetar._topics import parse_topic
from magnetar.cli.admin import output as out
from magnetar.cli.admin.names import namespace_arg, namespace_path, topic_arg
from magnetar.exceptions import PulsarException

Call = Callable[..., Any]
VERBS = frozenset(
    {
        "list", "list-partitioned-topics", "create", "create-partitioned-topic", "delete",
        "delete-partitioned-topic", "stats", "partitioned-stats", "compact", "compaction-status",
    }
)  # fmt: skip
POLL_INTERVAL_S = 1.0
_STATUS_TEXT = {
    "NOT_RUN": "Compaction has not been run for {topic} since broker startup",
    "RUNNING": "Compaction is currently running",
    "SUCCESS": "Compaction was a success",
}


class CompactionFailed(out.CommandFailed):
    """``compaction-status``: the last compaction of the topic failed (its error)."""


def add_verbs(topics: Any) -> None:
    """Add the verbs to ``magnetar admin topics``' subparsers."""

    def verb(name: str, help_text: str, what: str = "topic") -> argparse.ArgumentParser:
        v: argparse.ArgumentParser = topics.add_parser(name, help=help_text)
        if what == "topic":
            v.add_argument("topic", type=topic_arg)
        else:
            v.add_argument("namespace", type=namespace_arg, help="tenant/namespace")
        return v

    out.add_output(verb("list", "the namespace's topics (partitions each)", "namespace"))
    out.add_output(verb("list-partitioned-topics", "the namespace's partitioned topics", "namespace"))  # fmt: skip
    verb("create", "create a non-partitioned topic")
    verb("create-partitioned-topic", "create a partitioned topic").add_argument(
        "-p", "--partitions", type=int, required=True
    )
    for name in ("delete", "delete-partitioned-topic"):
        d = verb(name, f"{name.replace('-', ' ')} and its subscriptions")
        d.add_argument("-f", "--force", action="store_true", help="even with clients connected")
        d.add_argument("-d", "--deleteSchema", action="store_true", help="delete its schema too")
    out.add_output(verb("stats", "the topic's counters and subscriptions"))
    stats = verb("partitioned-stats", "a partitioned topic's stats summed over its partitions")
    stats.add_argument("--per-partition", action="store_true", help="each partition's too")
    out.add_output(stats)
    verb("compact", "start a compaction (latest value per key)")
    status = verb("compaction-status", "whether the last compaction ran, runs or failed")
    status.add_argument("-w", "--wait-complete", action="store_true", help="wait while it runs")
    out.add_output(status)


def run(args: argparse.Namespace, call: Call, sleep_s: Callable[[float], None] = time.sleep) -> str | None:  # fmt: skip
    """Do the verb with ``call`` (JSON requests); returns what to print (None: nothing).
    ``sleep_s`` waits between ``compaction-status -w`` polls. Raises PulsarException (the
    service refused), CompactionFailed (``compaction-status`` of a failed compaction)."""
    v = args.verb
    if v in ("list", "list-partitioned-topics"):
        tenant_ns = namespace_path(args.namespace).removeprefix("/admin/v2/namespaces/")
        suffix = "/partitioned" if v == "list-partitioned-topics" else ""
        return out.render(call("GET", f"/admin/v2/persistent/{tenant_ns}{suffix}"), args.output)
    name = parse_topic(args.topic)
    topic = f"/admin/v2/{name.path()}"
    if v in ("create", "create-partitioned-topic"):
        partitioned = v == "create-partitioned-topic"
        call("PUT", topic + ("/partitions" if partitioned else ""), args.partitions if partitioned else None)  # fmt: skip
        return None
    if v in ("delete", "delete-partitioned-topic"):
        force = "?force=true" if args.force else ""
        call("DELETE", topic + ("/partitions" if v == "delete-partitioned-topic" else "") + force)
        if args.deleteSchema:
            _delete_schema(call, name.path().removeprefix("persistent/"))
        return None
    if v == "stats":
        return _stats(call("GET", f"{topic}/stats"), args.output)
    if v == "partitioned-stats":
        per = "true" if args.per_partition else "false"
        return _stats(call("GET", f"{topic}/partitioned-stats?perPartition={per}"), args.output)
    if v == "compact":
        call("PUT", f"{topic}/compaction")
        return f"Topic compaction requested for {name}."
    return _compaction_status(args, call, topic, str(name), sleep_s)


def _delete_schema(call: Call, tenant_ns_topic: str) -> None:
    try:
        call("DELETE", f"/admin/v2/schemas/{tenant_ns_topic}/schema")
    except PulsarException as e:
        if "Schema not found" not in str(e):
            raise


def _compaction_status(args: argparse.Namespace, call: Call, topic: str, name: str, sleep_s: Callable[[float], None]) -> str | None:  # fmt: skip
    status = call("GET", f"{topic}/compaction")
    while args.wait_complete and status.get("status") == "RUNNING":
        sleep_s(POLL_INTERVAL_S)
        status = call("GET", f"{topic}/compaction")
    if status.get("status") == "ERROR":
        raise CompactionFailed(f"Error in compaction: {status.get('lastError') or 'no reason given'}")  # fmt: skip
    if args.output == "json":
        return out.to_json(status)
    return _STATUS_TEXT.get(status.get("status", ""), "{status}").format(topic=name, status=status)


def _flat(stats: dict[str, Any]) -> dict[str, Any]:
    """The scalar counters, one level of nesting flattened (``compaction.horizon``)."""
    flat: dict[str, Any] = {}
    for key, value in stats.items():
        if key in ("subscriptions", "partitions", "publishers"):
            continue
        if isinstance(value, dict):
            flat.update({f"{key}.{k}": v for k, v in value.items()})
        else:
            flat[key] = value
    return flat


def _stats(stats: dict[str, Any], output: str) -> str | None:
    """A topic's stats for people (see the module) or as JSON."""
    if output == "json":
        return out.to_json(stats)
    parts = [out.key_values(_flat(stats)) or ""]
    subs = stats.get("subscriptions") or {}
    if subs:
        subs_header = (
            "SUBSCRIPTION",
            "TYPE",
            "MSG BACKLOG",
            "UNACKED",
            "CONSUMERS",
            "MSG RATE OUT",
        )
        sub_rows = [
            (name, s.get("type"), s.get("msgBacklog"), s.get("unackedMessages"),
             len(s.get("consumers") or []), s.get("msgRateOut"))
            for name, s in sorted(subs.items())
        ]  # fmt: skip
        parts.append(out.table(subs_header, sub_rows))
    partitions = stats.get("partitions") or {}
    if partitions:
        rows = [
            (
                name,
                p.get("msgInCounter"),
                p.get("msgOutCounter"),
                p.get("storageSize"),
                p.get("backlogSize"),
            )  # fmt: skip
            for name, p in sorted(partitions.items())
        ]
        parts.append(out.table(("PARTITION", "MSG IN", "MSG OUT", "STORAGE SIZE", "BACKLOG SIZE"), rows))  # fmt: skip
    return "\n\n".join(p for p in parts if p) or None
