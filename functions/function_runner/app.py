"""Function runner: runs a Pulsar Function's batch (no HTTP route, no store access).

Event: what the trusted dispatcher sends (``{"function": "tenant/namespace/name", "config":
{...}, "version": n, "records": [...], "token": ...}``). Returns ``{"batchItemFailures":
[...]}``; a batch that is not one, or a function that does not load, raises, so the whole
batch is retried. User code runs in a child process per batch and reaches only the HTTP
API, with its role's token.
"""

import os

from magnetar_core.api import function_runner, function_zygote, metrics

settings = function_runner.RunnerSettings.from_env(os.environ)
function_zygote.undumpable()  # this process holds every batch sent: no child may read it
function_runner.zygote_of(settings.api_url).start()


@metrics.invocation_measured("function_runner")
def lambda_handler(event, context):
    return function_runner.run_isolated(event, settings)
