"""``python -m magnetar.cli``: the ``magnetar`` command (``magnetar.cli.main``)."""

import sys

from magnetar.cli.main import main

sys.exit(main())
