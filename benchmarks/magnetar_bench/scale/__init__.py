"""Scale on an AWS-shaped model: the engine's real services on the in-memory stores, with
every store call taking the time, capacity and retries of the AWS requests it stands for,
on a virtual clock (docs/benchmarks.md, "Scale on an AWS-shaped model").

Parts: ``sim`` (the virtual clock), ``profile`` (what is assumed of AWS), ``requests``
(port call -> AWS requests), ``capacity`` (per-key limits, botocore's retries), ``stores``
(the modelled adapters), ``lambdas`` (containers, concurrency, cold starts), ``world`` (one
run), ``clients`` (producers and consumers as the SDK behaves), ``scenarios``, ``report``
and ``cli`` (``magnetar perf scale``).
"""
