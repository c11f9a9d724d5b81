"""``magnetar perf authorizer``: what the API Gateway Lambda authorizer adds, in time and dollars.

Runs the authorizer in-process on the emulator (moto: SSM for the key, STS for IAM tokens):

* **cold**: a new container's first request (SSM client made, the SecureString read, the key
  parsed, the token checked): ``--containers`` times;
* **warm**: later requests of a container (the key kept: only the token is checked), HS256
  and RS256 tokens, ``--requests`` each;
* **iam**: a warm container checking an SDK IAM token (one STS round trip to the emulator).

API Gateway caches an answer per ``Authorization`` header for ``--cache-seconds``: only a miss
invokes the authorizer. The cost model prices a miss as one Lambda request ($0.20/M) plus its
billed duration (1 ms granularity, arm64, 256 MB; ``shared/PRICES.md``), for callers that
send ``r`` requests per second with one token: a miss every ``cache_seconds`` of each token,
so invocations per request = ``max(1/(r * cache_seconds), ...)``, 1 without the cache.
Latency on AWS adds the Lambda invoke (a few ms warm, ~200-400 ms cold for Python with
boto3) and, for IAM tokens, a real STS call (~10-30 ms in region): not measured here.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import math
import os
import sys
import time
from collections.abc import Callable

from magnetar_bench.costs import LAMBDA_ARM_PER_GB_S, LAMBDA_MEMORY_GB, LAMBDA_PER_REQUEST
from magnetar_bench.stats import percentile

PARAMETER = "/bench/token-key"


def _timed_ms(call: Callable[[], object], times: int) -> list[float]:
    out = []
    for _ in range(times):
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * 1000)
    return out


def _summary(samples_ms: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(samples_ms, 0.5), 3),
        "p99_ms": round(percentile(samples_ms, 0.99), 3),
        "max_ms": round(max(samples_ms), 3),
    }


def usd_per_million_requests(duration_ms: float, invocations_per_request: float) -> float:
    """Dollars the authorizer adds per million API requests: Lambda request + billed
    duration (rounded up to whole ms) for each invocation."""
    billed_s = max(1, math.ceil(duration_ms)) / 1000
    per_invocation = LAMBDA_PER_REQUEST + billed_s * LAMBDA_MEMORY_GB * LAMBDA_ARM_PER_GB_S
    return round(per_invocation * invocations_per_request * 1e6, 5)


def cost_table(warm_ms: float, cache_seconds: int, rates: tuple[float, ...]) -> dict[str, float]:
    """Dollars per million requests without the cache and, with it, per caller rate."""
    table = {"no_cache": usd_per_million_requests(warm_ms, 1.0)}
    for rate in rates:
        ratio = min(1.0, 1.0 / (rate * cache_seconds)) if cache_seconds else 1.0
        table[f"cache_{cache_seconds}s_at_{rate:g}_req_per_s_per_token"] = usd_per_million_requests(warm_ms, ratio)  # fmt: skip
    return table


def run_authorizer(containers: int, requests: int, cache_seconds: int) -> dict:
    """One run on a fresh emulator; the JSON report."""
    import magnetar
    from magnetar_core.api.authorizer import authorizer_from_env
    from magnetar_local.emulator import FAKE_CREDENTIALS, REGION, Emulator
    from magnetar_wire.token_keys import new_key_pair, new_secret_key
    from magnetar_wire.tokens import SigningKey, create

    os.environ.update(FAKE_CREDENTIALS)
    emulator = Emulator(host="127.0.0.1", port=0).start(timeout_s=60)
    try:
        import boto3

        ssm = boto3.session.Session(region_name=REGION).client("ssm", endpoint_url=emulator.url)
        secret, pair = new_secret_key(), new_key_pair("RS256")
        public_ref = "data:;base64," + base64.b64encode(pair.public_der).decode()
        value = json.dumps(
            {"tokenSecretKey": base64.b64encode(secret).decode(), "tokenPublicKey": public_ref}
        )
        ssm.put_parameter(Name=PARAMETER, Value=value, Type="SecureString")
        env = {"TOPICS_TABLE": "t", "LOG_TABLE": "l", "CURSORS_TABLE": "c", "ENTRIES_BUCKET": "b",
               "AWS_ENDPOINT_URL": emulator.url, "AWS_REGION": REGION, "AUTHENTICATION_ENABLED": "true",
               "TOKEN_KEY_PARAMETER": PARAMETER}  # fmt: skip
        hs256 = {"headers": {"authorization": "Bearer " + create(SigningKey.secret(secret), "app")}}
        rs256 = {
            "headers": {
                "authorization": "Bearer " + create(SigningKey.private(pair.private_der), "app")
            }
        }
        iam = magnetar.AuthenticationAws(endpoint_url=emulator.url)
        iam_event = {"headers": {"authorization": iam._headers()["Authorization"]}}

        def cold() -> None:
            assert authorizer_from_env(env)(hs256)["isAuthorized"]

        cold_ms = _timed_ms(cold, containers)
        warm = authorizer_from_env(env)
        assert warm(hs256)["isAuthorized"] and warm(iam_event)["isAuthorized"]
        hs_ms = _timed_ms(lambda: warm(hs256), requests)
        rs_ms = _timed_ms(lambda: warm(rs256), requests)
        iam_ms = _timed_ms(lambda: warm(iam_event), max(1, requests // 10))
    finally:
        emulator.stop()
    warm_p50 = percentile(hs_ms, 0.5)
    return {
        "path": "authorizer",
        "containers": containers,
        "requests": requests,
        "cold_first_request": _summary(cold_ms),
        "warm_hs256": _summary(hs_ms),
        "warm_rs256": _summary(rs_ms),
        "warm_iam_sts_on_emulator": _summary(iam_ms),
        "usd_per_million_api_requests": cost_table(warm_p50, cache_seconds, (1, 10, 100)),
        "note": "in-process: Lambda invoke overhead and real STS latency not included",
    }


def main(argv: list[str] | None = None) -> int:
    """CLI entry: ``magnetar perf authorizer [--containers N] [--requests N] [--cache-seconds S]``."""
    parser = argparse.ArgumentParser(
        prog="magnetar perf authorizer", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--containers", type=int, default=20)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--cache-seconds", type=int, default=300)
    args = parser.parse_args(argv)
    with contextlib.redirect_stdout(sys.stderr):
        report = run_authorizer(args.containers, args.requests, args.cache_seconds)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
