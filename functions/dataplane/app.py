"""Data plane behind a Lambda function URL (template.yaml ``FrontDoor: FunctionUrl``): routes
each ``$default`` event to the handler app API Gateway would have called, after the token
check API Gateway's authorizer would have made (``magnetar_core.api.front_door``)."""

from magnetar_core.api import front_door
from magnetar_core.api.authorizer import container_authorizer

authorize = container_authorizer()
serve = front_door.data_plane(front_door.functions_dir_of(__file__), authorize)


def lambda_handler(event: dict, context: object) -> object:
    return serve(event, context)
