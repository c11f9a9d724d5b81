"""``magnetar verify``: a bounded end-to-end check of any deployment (the local stack or AWS)
with the public SDK and plain HTTP, in the client distribution.

- ``report``: the rows, the table, the JSON and the exit status (pure);
- ``context``: deadlines, plain HTTP to the service, the run's names;
- ``checks_messaging``, ``checks_service``, ``webhook``: the checks;
- ``runner``: runs them in order, each bounded, then cleans up;
- ``cli``: the command's flags (``magnetar verify --help``).
"""
