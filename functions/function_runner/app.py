"""Function runner: runs a Pulsar Function on a trigger's batch (no HTTP route).

Event: ``{"function": "tenant/namespace/name", "records": [...]}`` (the trigger delivery
contract plus the function's id). Returns ``{"batchItemFailures": [...]}``; a function that
does not exist or does not load raises, so the whole batch is retried.
"""

from magnetar_core.api import http, metrics

engine = http.container_engine()


@metrics.invocation_measured("function_runner")
def lambda_handler(event, context):
    return engine().function_runtime.handle(str(event.get("function", "")), event)
