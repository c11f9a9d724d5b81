"""``python -m magnetar_local [--port 8080] [--host 127.0.0.1]``."""

import sys

from magnetar_local.main import run

raise SystemExit(run(sys.argv[1:]))
