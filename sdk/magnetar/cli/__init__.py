"""The ``magnetar`` command (``main``) and its verbs: ``admin``, ``functions``, ``tokens``, ``verify``, ``status`` / ``stop``."""
