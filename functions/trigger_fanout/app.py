"""Trigger fan-out: the log table's DynamoDB Stream (INSERT records) wakes the triggers of
the topics committed to (magnetar_core.api.fanout)."""

from magnetar_core.api import fanout, http

engine = http.container_engine()
lambda_handler = fanout.lambda_handler(engine)
