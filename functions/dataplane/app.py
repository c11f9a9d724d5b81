"""Data plane behind a Lambda function URL (template.yaml ``FrontDoor: FunctionUrl``): routes
each ``$default`` event to the handler app API Gateway would have called, after the token
check API Gateway's authorizer would have made (``magnetar_core.api.front_door``)."""

import os
from pathlib import Path

from magnetar_core.api import front_door
from magnetar_core.api.authorizer import container_authorizer

serve = front_door.data_plane(Path(__file__).resolve().parents[1], os.environ, container_authorizer())


def lambda_handler(event: dict, context: object) -> object:
    return serve(event, context)
