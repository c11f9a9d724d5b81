"""``CloudWatchHistory``: the console's ``MetricsHistory`` read from the metrics the handlers
already emit as EMF (``api.metrics``), with one CloudWatch ``GetMetricData`` request.

Topics are not CloudWatch dimensions (they would mint a custom metric per topic), so the
finest series CloudWatch keeps is the topic's *namespace*: ``MessagesIn`` and ``MessagesOut``
summed per minute over the dimensions ``service, tenant, namespace`` (the data plane's
records). The answer says so (``scope="namespace"``). No backlog metric is emitted, so
``msgBacklog`` is empty here: the console adds the backlog of now from the topic's stats.
Cost: one GetMetricData request (2 metrics) per chart load, $0.01 per 1,000 metrics read.
"""

from __future__ import annotations

from datetime import UTC, datetime

from botocore.exceptions import BotoCoreError, ClientError

from magnetar_core.adapters.aws.clients import BotoClient
from magnetar_core.domain.errors import StorageFault, TooManyRequests
from magnetar_core.ports import HISTORY_PERIOD_MS, History, Point

QUERIES = {"msgRateIn": "MessagesIn", "msgRateOut": "MessagesOut"}
"""Series -> the EMF metric it is the per-second rate of."""


class CloudWatchHistory:
    """Reads ``namespace`` (the CloudWatch metric namespace, e.g. ``Magnetar``) metrics of
    ``service`` (the EMF ``service`` dimension) through ``cloudwatch`` (a boto3 client)."""

    def __init__(self, cloudwatch: BotoClient, namespace: str, service: str) -> None:
        self._cloudwatch = cloudwatch
        self._namespace = namespace
        self._service = service

    def history(self, topic: str, start_ms: int, end_ms: int) -> History:
        """Per-minute rates of ``topic``'s namespace in ``[start_ms, end_ms)``; raises
        TooManyRequests (throttled) or StorageFault (CloudWatch failed)."""
        tenant, namespace = topic.split("://", 1)[1].split("/")[:2]
        dimensions = [
            {"Name": "service", "Value": self._service},
            {"Name": "tenant", "Value": tenant},
            {"Name": "namespace", "Value": namespace},
        ]
        queries = [
            {
                "Id": f"q{index}",
                "Label": series,
                "MetricStat": {
                    "Metric": {
                        "Namespace": self._namespace,
                        "MetricName": metric,
                        "Dimensions": dimensions,
                    },
                    "Period": HISTORY_PERIOD_MS // 1000,
                    "Stat": "Sum",
                },
                "ReturnData": True,
            }
            for index, (series, metric) in enumerate(QUERIES.items())
        ]
        found: dict[str, list[Point]] = {series: [] for series in QUERIES}
        try:
            pages = self._cloudwatch.get_paginator("get_metric_data").paginate(
                MetricDataQueries=queries,
                StartTime=datetime.fromtimestamp(start_ms / 1000, UTC),
                EndTime=datetime.fromtimestamp(end_ms / 1000, UTC),
                ScanBy="TimestampAscending",
            )
            for page in pages:
                for result in page["MetricDataResults"]:
                    series = list(QUERIES)[int(result["Id"][1:])]
                    for at, value in zip(result["Timestamps"], result["Values"], strict=True):
                        at_ms = int(at.timestamp() * 1000)
                        found[series].append((at_ms, value * 1000 / HISTORY_PERIOD_MS))
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code", "")
            if code in ("Throttling", "ThrottlingException", "LimitExceeded"):
                raise TooManyRequests(f"CloudWatch throttled GetMetricData: {code}") from exc
            raise StorageFault(f"CloudWatch GetMetricData failed: {code}") from exc
        except BotoCoreError as exc:
            raise StorageFault(f"CloudWatch GetMetricData failed: {exc}") from exc
        series_sorted = {name: sorted(points) for name, points in found.items()}
        return History(
            scope="namespace",
            period_ms=HISTORY_PERIOD_MS,
            series={**series_sorted, "msgBacklog": []},
        )
