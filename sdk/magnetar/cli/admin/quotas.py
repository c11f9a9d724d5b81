"""``magnetar admin namespaces``: pulsar-admin's backlog quota and rate verbs.

    magnetar admin namespaces get-backlog-quotas T/NS
    magnetar admin namespaces set-backlog-quota T/NS [-l 10G] [-lt 1h] -p POLICY [-t TYPE]
    magnetar admin namespaces remove-backlog-quota T/NS [-t destination_storage|message_age]
    magnetar admin namespaces get-publish-rate | remove-publish-rate T/NS
    magnetar admin namespaces set-publish-rate T/NS [-m MSGS/S] [-b BYTES/S]
    magnetar admin namespaces get-dispatch-rate | remove-dispatch-rate T/NS
    magnetar admin namespaces set-dispatch-rate T/NS [-md MSGS] [-bd BYTES] [-dt SECONDS] [-rp]
    magnetar admin namespaces get-subscription-dispatch-rate | set-... | remove-... T/NS
    magnetar admin namespaces get-subscribe-rate | remove-subscribe-rate T/NS
    magnetar admin namespaces set-subscribe-rate T/NS [-sr N] [-st SECONDS]

pulsar-admin's flags and defaults (a rate left out is -1: no limit). ``-l`` takes a size with
an optional unit ``k``, ``m``, ``g``, ``t`` (powers of 1024), ``-lt`` a time with ``s``,
``m``, ``h``, ``d``, ``w``, ``y`` (no unit: seconds; ``magnetar.cli.admin.units``). Changes print
nothing; reads print a table, or JSON with ``-o json`` (a rate that is not set prints nothing).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from magnetar.cli.admin import output as out
from magnetar.cli.admin.names import namespace_arg, namespace_path
from magnetar.cli.admin.units import limit_bytes_arg, limit_seconds_arg

Call = Callable[..., Any]
RATES = {
    "publish-rate": "publishRate",
    "dispatch-rate": "dispatchRate",
    "subscription-dispatch-rate": "subscriptionDispatchRate",
    "subscribe-rate": "subscribeRate",
}
VERBS = frozenset(
    {"get-backlog-quotas", "set-backlog-quota", "remove-backlog-quota"}
    | {f"{verb}-{rate}" for rate in RATES for verb in ("get", "set", "remove")}
)


def add_verbs(ns: Any) -> None:
    """Add the verbs to ``magnetar admin namespaces``' subparsers."""

    def verb(name: str, help_text: str) -> argparse.ArgumentParser:
        v: argparse.ArgumentParser = ns.add_parser(name, help=help_text)
        v.add_argument("namespace", type=namespace_arg)
        if name.startswith("get-"):
            out.add_output(v)
        return v

    verb("get-backlog-quotas", "the backlog quotas by type")
    s = verb("set-backlog-quota", "set a backlog quota")
    s.add_argument(
        "-l", "--limitSize", type=limit_bytes_arg, default=-1, help="bytes, e.g. 10G (-1: no limit)"
    )
    s.add_argument(
        "-lt", "--limitTime", type=limit_seconds_arg, default=-1, help="e.g. 1h (-1: no limit)"
    )
    s.add_argument("-p", "--policy", required=True, choices=("producer_request_hold", "producer_exception", "consumer_backlog_eviction"))  # fmt: skip
    s.add_argument("-t", "--type", default="destination_storage", choices=("destination_storage", "message_age"))  # fmt: skip
    r = verb("remove-backlog-quota", "remove a backlog quota")
    r.add_argument("-t", "--type", default="destination_storage", choices=("destination_storage", "message_age"))  # fmt: skip
    for rate in RATES:
        verb(f"get-{rate}", f"the {rate}")
        verb(f"remove-{rate}", f"remove the {rate}")
    p = verb("set-publish-rate", "messages and bytes per second a topic takes")
    p.add_argument("-m", "--msg-publish-rate", type=int, default=-1)
    p.add_argument("-b", "--byte-publish-rate", type=int, default=-1)
    for rate in ("dispatch-rate", "subscription-dispatch-rate"):
        d = verb(f"set-{rate}", "messages and bytes dispatched per period")
        d.add_argument("-md", "--msg-dispatch-rate", type=int, default=-1)
        d.add_argument("-bd", "--byte-dispatch-rate", type=int, default=-1)
        d.add_argument("-dt", "--dispatch-rate-period", type=int, default=1, help="seconds")
        d.add_argument("-rp", "--relative-to-publish-rate", action="store_true")
    sr = verb("set-subscribe-rate", "subscribes per consumer per period")
    sr.add_argument("-sr", "--subscribe-rate", type=int, default=-1)
    sr.add_argument("-st", "--subscribe-rate-period", type=int, default=30, help="seconds")


def _body(args: argparse.Namespace, segment: str) -> dict[str, Any]:
    if segment == "publishRate":
        return {
            "publishThrottlingRateInMsg": args.msg_publish_rate,
            "publishThrottlingRateInByte": args.byte_publish_rate,
        }
    if segment == "subscribeRate":
        return {
            "subscribeThrottlingRatePerConsumer": args.subscribe_rate,
            "ratePeriodInSecond": args.subscribe_rate_period,
        }
    return {
        "dispatchThrottlingRateInMsg": args.msg_dispatch_rate,
        "dispatchThrottlingRateInByte": args.byte_dispatch_rate,
        "ratePeriodInSecond": args.dispatch_rate_period,
        "relativeToPublishRate": args.relative_to_publish_rate,
    }


def request(args: argparse.Namespace) -> tuple[str, str, Any]:
    """The ``(method, path, body)`` of the verb (its arguments checked by the parser)."""
    path = namespace_path(args.namespace)
    v = args.verb
    if v == "get-backlog-quotas":
        return "GET", f"{path}/backlogQuotaMap", None
    if v == "set-backlog-quota":
        body = {"limitSize": args.limitSize, "limitTime": args.limitTime, "policy": args.policy}
        return "POST", f"{path}/backlogQuota?backlogQuotaType={args.type}", body
    if v == "remove-backlog-quota":
        return "DELETE", f"{path}/backlogQuota?backlogQuotaType={args.type}", None
    action, rate = v.split("-", 1)
    segment = RATES[rate]
    if action == "get":
        return "GET", f"{path}/{segment}", None
    if action == "remove":
        return "DELETE", f"{path}/{segment}", None
    return "POST", f"{path}/{segment}", _body(args, segment)


def run(args: argparse.Namespace, call: Call) -> str | None:
    """Do the verb with ``call``; returns what to print (a table, or JSON with ``-o json``;
    None: nothing). Raises PulsarException."""
    return out.render(call(*request(args)), getattr(args, "output", "table"))
