"""The cost report's rows (dollars per million messages, a month or an idle spell, by AWS
service, SQS and SNS + SQS beside) and their Markdown table (docs/benchmarks.md)."""

from __future__ import annotations

from magnetar_bench.anchors import (
    SNS_SQS_USD_PER_MILLION,
    SQS_USD_PER_MILLION,
    sns_sqs_usd_per_million,
)
from magnetar_bench.cost.usage import Usage


def report_of(name: str, front_door: str, usage: Usage, scale: float, per: str,
              subscriptions: int = 1) -> dict:  # fmt: skip
    """One row: dollars ``per`` (million messages published, a month, an idle spell) by
    service, with SQS (one queue per subscription, the producer sending to each) and SNS +
    SQS fan-out to ``subscriptions`` queues beside (for an idle spell: none)."""
    digits = 4 if scale > 1 else 8
    usd = {k: round(v * scale, digits) for k, v in usage.usd(front_door).items()}
    sqs, sns_sqs = SQS_USD_PER_MILLION.get(name), SNS_SQS_USD_PER_MILLION.get(name)
    if sqs is not None and subscriptions > 1:
        batch = 10 if name.startswith("batched") else 1
        sqs, sns_sqs = round(sqs * subscriptions, 4), sns_sqs_usd_per_million(subscriptions, batch)
    return {"workload": name, "front_door": front_door, "per": per, "subscriptions": subscriptions,
            "usd": {**usd, "total": round(sum(usd.values()), digits)}, "sqs_usd": sqs,
            "sns_sqs_usd": sns_sqs,
            "http_calls": round(usage.http_calls * scale), "aws_requests": {
                op: round(n * scale) for op, n in sorted(usage.aws.items())},
            "dynamodb_wru": round(usage.write_units * scale), "dynamodb_rru": round(usage.read_units * scale),
            "step_functions_transitions": round(usage.timers.transitions * scale),
            "timer_executions": {"standard": round(usage.timers.standard_executions * scale),
                                 "express": round(usage.timers.express_executions * scale)},
            "dynamodb_units_by_table": {k: round(v * scale) for k, v in sorted(usage.units_by_table.items())}}  # fmt: skip


COLUMNS = ("api_gateway", "lambda_requests", "lambda_duration", "dynamodb_writes",
           "dynamodb_reads", "s3", "step_functions", "total")  # fmt: skip


def table(rows: list[dict]) -> str:
    """The rows as a Markdown table (dollars), SQS and SNS + SQS in the last columns."""
    head = ["workload", "subscriptions", "front door", "per", *COLUMNS, "SQS", "SNS+SQS"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def money(value: float | None) -> str:
        small = value is not None and 0 < value < 1e-4  # an idle spell's micro-dollars
        return "-" if value is None else f"{value:.1e}" if small else f"{value:.4f}"

    for row in rows:
        cells = [row["workload"], str(row.get("subscriptions", 1)), row["front_door"], row["per"],
                 *(money(row["usd"].get(c)) for c in COLUMNS),
                 money(row["sqs_usd"]), money(row["sns_sqs_usd"])]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
