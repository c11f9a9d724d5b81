"""Adapters over the service's own HTTP API (the function runner's way out)."""
