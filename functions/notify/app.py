"""Notification channel: the WebSocket API's $connect, watch and $disconnect routes
(magnetar_core.api.notify)."""

from magnetar_core.api import http, notify

engine = http.container_engine()
lambda_handler = notify.lambda_handler(engine)
