"""Shared fixtures for every test directory.

``local_stack`` and ``aws_clients`` (session-scoped) come from magnetar_local.testing.
"""

from magnetar_local.testing import aws_clients, local_stack  # noqa: F401 - pytest fixtures
