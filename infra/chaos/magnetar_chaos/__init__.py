"""Fault injection and soak runs for Magnetar (``magnetar chaos``): tooling, not the service."""
