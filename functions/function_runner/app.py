"""Function runner: runs a Pulsar Function's batch (no HTTP route, no store access).

Event: what the trusted dispatcher sends (``{"function": "tenant/namespace/name", "config":
{...}, "version": n, "records": [...], "token": ...}``). Returns ``{"batchItemFailures":
[...]}``; a batch that is not one, or a function that does not load, raises, so the whole
batch is retried. User code runs in a child process per batch and reaches only the HTTP
API, with its role's token.
"""

from magnetar_core.api import function_runner, metrics

# the container's settings (MAGNETAR_API_URL) and zygote, from its first batch on
runner = function_runner.Container()


@metrics.invocation_measured("function_runner")
def lambda_handler(event, context):
    return runner.run(event)
