"""The admin function's Pulsar Functions routes (``/admin/v3/functions``): register (``POST``:
409 Conflict when the name holds another definition), create or replace (``PUT``), both run
as the caller's role; read, list, delete; and a function's counters and state, the
routes its runner calls with its role's token (Pulsar's ``.../state/{key}``, and Magnetar's
``.../counters/{key}``):

* ``GET .../{name}/state/{key}``: ``{"key", "byteValue": base64, "stringValue"?}`` (Pulsar's
  FunctionState; ``stringValue`` when the bytes are UTF-8); 404 NotFound when none;
* ``POST .../{name}/state/{key}``: body ``{"byteValue": base64}`` or ``{"stringValue":
  text}``; 204;
* ``GET .../{name}/counters/{key}``: ``{"key", "numberValue"}`` (0: never incremented);
  ``POST`` with ``{"amount": n}`` adds atomically and answers the new value; ``DELETE``
  forgets it (204).

And pulsar-admin's ``functions status|stats|start|stop|restart|trigger`` (Pulsar's paths
and shapes; ``services.functions.control``):

* ``GET .../{name}/status``: FunctionStatus; ``GET .../{name}/stats``: FunctionStats;
* ``POST .../{name}/start|stop|restart``: 204;
* ``POST .../{name}/trigger``: body ``{"data": value, "topic"?: input}`` (Pulsar's form
  fields, as JSON); answers the function's return value on it as a JSON string.

All need the namespace's ``functions`` permission (as Pulsar's state routes); a bad key or
body is 400 InvalidMessage and changes nothing.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
from collections.abc import Callable

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response

from magnetar_core.api import http, request
from magnetar_core.domain.errors import InvalidMessage
from magnetar_core.engine import Engine

FN = "/admin/v3/functions/<tenant>/<namespace>"


def _state_value(body: dict) -> bytes:
    if set(body) - {"key", "byteValue", "stringValue"} or ("byteValue" in body) == ("stringValue" in body):  # fmt: skip
        raise InvalidMessage("The body must be {\"byteValue\": base64} or {\"stringValue\": text}")  # fmt: skip
    if "stringValue" in body:
        return str(request.field(body, "stringValue", str, "")).encode()
    try:
        return base64.b64decode(request.field(body, "byteValue", str, ""), validate=True)
    except (binascii.Error, ValueError):
        raise InvalidMessage("Field 'byteValue' must be base64") from None


def _state_body(key: str, value: bytes) -> dict:
    body = {"key": key, "byteValue": base64.b64encode(value).decode()}
    with contextlib.suppress(UnicodeDecodeError):
        body["stringValue"] = value.decode("utf-8")
    return body


def register(app: APIGatewayHttpResolver, engine: Callable[[], Engine]) -> None:
    """Add the functions' routes to ``app``, served by ``engine()``'s functions."""

    @app.get(FN)
    def list_functions(tenant: str, namespace: str) -> Response:
        return http.ok(engine().functions.names(tenant, namespace))

    @app.post(FN + "/<name>")
    def register_function(tenant: str, namespace: str, name: str) -> Response:
        body, role = request.json_body(app), http.caller_role(app)
        config, _created = engine().functions.put(tenant, namespace, name, body, role,
                                                  replace=False)  # fmt: skip
        return http.ok(config.to_body())

    @app.put(FN + "/<name>")
    def put_function(tenant: str, namespace: str, name: str) -> Response:
        body, role = request.json_body(app), http.caller_role(app)
        config, _created = engine().functions.put(tenant, namespace, name, body, role)
        return http.ok(config.to_body())

    @app.get(FN + "/<name>")
    def get_function(tenant: str, namespace: str, name: str) -> Response:
        return http.ok(engine().functions.get(tenant, namespace, name).to_body())

    @app.delete(FN + "/<name>")
    def delete_function(tenant: str, namespace: str, name: str) -> Response:
        engine().functions.delete(tenant, namespace, name)
        return http.no_content()

    @app.get(FN + "/<name>/state/<key>")
    def get_state(tenant: str, namespace: str, name: str, key: str) -> Response:
        return http.ok(_state_body(key, engine().functions.get_state(tenant, namespace, name, key)))  # fmt: skip

    @app.post(FN + "/<name>/state/<key>")
    def put_state(tenant: str, namespace: str, name: str, key: str) -> Response:
        value = _state_value(request.json_object(app))
        engine().functions.put_state(tenant, namespace, name, key, value)
        return http.no_content()

    @app.get(FN + "/<name>/counters/<key>")
    def get_counter(tenant: str, namespace: str, name: str, key: str) -> Response:
        value = engine().functions.get_counter(tenant, namespace, name, key)
        return http.ok({"key": key, "numberValue": value})

    @app.post(FN + "/<name>/counters/<key>")
    def incr_counter(tenant: str, namespace: str, name: str, key: str) -> Response:
        amount = request.field(request.json_object(app), "amount", int, None)
        if amount is None:
            raise InvalidMessage("Field 'amount' is required: the integer to add")
        value = engine().functions.incr_counter(tenant, namespace, name, key, amount)
        return http.ok({"key": key, "numberValue": value})

    @app.delete(FN + "/<name>/counters/<key>")
    def delete_counter(tenant: str, namespace: str, name: str, key: str) -> Response:
        engine().functions.del_counter(tenant, namespace, name, key)
        return http.no_content()

    @app.get(FN + "/<name>/status")
    def function_status(tenant: str, namespace: str, name: str) -> Response:
        return http.ok(engine().functions.control.status(tenant, namespace, name))

    @app.get(FN + "/<name>/stats")
    def function_stats(tenant: str, namespace: str, name: str) -> Response:
        return http.ok(engine().functions.control.stats(tenant, namespace, name))

    @app.post(FN + "/<name>/start")
    def start_function(tenant: str, namespace: str, name: str) -> Response:
        engine().functions.control.start(tenant, namespace, name)
        return http.no_content()

    @app.post(FN + "/<name>/stop")
    def stop_function(tenant: str, namespace: str, name: str) -> Response:
        engine().functions.control.stop(tenant, namespace, name)
        return http.no_content()

    @app.post(FN + "/<name>/restart")
    def restart_function(tenant: str, namespace: str, name: str) -> Response:
        engine().functions.control.restart(tenant, namespace, name)
        return http.no_content()

    @app.post(FN + "/<name>/trigger")
    def trigger_function(tenant: str, namespace: str, name: str) -> Response:
        body = request.json_object(app)
        data = request.field(body, "data", str, None)
        if data is None:
            raise InvalidMessage("Field 'data' is required: the value to trigger the function with")  # fmt: skip
        topic = request.field(body, "topic", str, None)
        return http.ok(engine().functions.control.trigger(tenant, namespace, name, data, topic))
