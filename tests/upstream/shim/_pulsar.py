"""``import _pulsar`` (pulsar-client's C extension) resolving to ``magnetar._pulsar``."""

import sys

from magnetar import _pulsar

sys.modules[__name__] = _pulsar
