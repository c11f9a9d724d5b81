"""One batch of a Pulsar Function run in this process on the HTTP API: what the function
runner's children do (``function_runner``, ``function_zygote``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from magnetar_core.adapters.http.function_api import FunctionApi
from magnetar_core.domain.runtime import Runtime
from magnetar_core.domain.triggers.records import TargetFailed
from magnetar_core.services.functions.runtime import FunctionRuntime

API_URL = "MAGNETAR_API_URL"
BATCH_TIMEOUT_S = 55.0
"""A batch's time: under the runner Lambda's 60 s timeout."""


@dataclass(frozen=True)
class RunnerSettings:
    """The runner's settings: the HTTP API's base URL, a batch's time."""

    api_url: str
    batch_timeout_s: float = BATCH_TIMEOUT_S

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RunnerSettings:
        url = env.get(API_URL, "")
        if not url.startswith(("https://", "http://")):
            raise TargetFailed(f"{API_URL} must be the HTTP API's base URL, not {url!r}")
        return cls(url)


_runtime = FunctionRuntime(Runtime().now_ms)


def handle(event: Mapping[str, Any], settings: RunnerSettings) -> dict[str, Any]:
    """Run the batch ``event`` (``runtime.batch_event``) in this process; its
    ``batchItemFailures``. Raises TargetFailed when the batch is not one or its function
    does not load."""
    api = FunctionApi(settings.api_url, str(event.get("function", "")), event.get("token"))
    return _runtime.run(event, api, api)
