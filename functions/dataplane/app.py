"""Data plane behind a Lambda function URL (template.yaml ``FrontDoor: FunctionUrl``): routes
each ``$default`` event to the handler app API Gateway would have called, after the token
check API Gateway's authorizer would have made (``magnetar_core.api.front_door``)."""

from magnetar_core.api import front_door, http
from magnetar_core.api.authorizer import container_authorizer

engine = http.container_engine()  # one per container, shared by the apps it serves
authorize = container_authorizer()
serve = front_door.data_plane(front_door.functions_dir_of(__file__), engine, authorize)


def lambda_handler(event: dict, context: object) -> object:
    return serve(event, context)
