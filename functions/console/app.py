"""Console: the web console's page (``GET /console``, ``/console/{proxy+}``) and the history
of its charts (``GET /console/api/history/...``); see ``magnetar_core.api.console``."""

from magnetar_core.api import console, http

engine = http.container_engine()
lambda_handler = console.lambda_handler(engine, console.lazy_history(engine))
