"""Magnetar's engine: topics, entries, cursors, dispatch and the storage adapters.

Shipped as the ``core`` Lambda layer. Pure domain modules (names, positions, range sets,
cursor state, dispatch policies) have no I/O; the AWS adapters live in ``storage``.
"""
