"""Pulsar Functions on triggers (issue 13): a function's stored definition and the ids its
outputs are published with, pure."""
