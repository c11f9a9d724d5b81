"""Authorizer: API Gateway's Lambda REQUEST authorizer (HTTP API, payload 2.0, simple
responses) - the role of the request's Bearer token (a Pulsar token or an IAM token)."""

from magnetar_core.api import metrics
from magnetar_core.api.authorizer import container_authorizer

authorize = container_authorizer()


@metrics.invocation_measured("authorizer")
def lambda_handler(event: dict, context: object) -> dict:
    return authorize(event)
