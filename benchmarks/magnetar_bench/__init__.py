"""Benchmark harnesses: measurement tools, not tests; their output goes to docs/benchmarks.md.

Each runs the embedded local stack (magnetar_local) in its own process, so every AWS request
the handlers make is counted. ``magnetar perf <path>`` runs them (``cli``):

``messages``   produce / consume / idle: throughput, AWS requests and dollars per message
``delayed``    delayed delivery: timer executions, state transitions, lateness
``segments``   the compact-segments Spark job against a one-request-at-a-time loop
``expiry``     the expire Spark job against a one-request-at-a-time loop
``costs``      the list-price cost model; ``meter`` counts gateway calls and handler time
"""
