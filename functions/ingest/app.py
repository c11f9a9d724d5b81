"""Ingest: S3 ObjectCreated notifications, EventBridge events, SNS notifications and
EventBridge Scheduler invocations published to the topics INGEST_ROUTES names."""

from magnetar_core.api import http, ingest

engine = http.container_engine()
lambda_handler = ingest.lambda_handler(engine)
