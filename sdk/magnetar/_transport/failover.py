"""``AutoClusterFailover``: a ``ServiceInfoProvider`` that moves the client between Magnetar
deployments (e.g. two regions) when the one in use stops answering, and back.

Every ``check_interval_ms`` it probes with ``GET /admin/v2/clusters`` (any role may call it;
it touches no table), with the deployment's authentication and CA bundle. A deployment is
healthy when it answers with a status below 500 within the probe timeout (the check
interval, between 1 and 30 s): a refused connection, a timeout or a 5xx is a failure. When
to switch is ``magnetar._transport.failover_policy``'s rule (thresholds of checks in a row).

On a switch the client sends every later request to the new deployment
(``Transport.switch``): a producer registers again there (same name) before its next commit
and resends the messages it holds, with their sequence ids; a consumer subscribes again with
its original settings (a subscription that does not exist there is created at the
``initial_position``) and drops its receiver queue, as on any reconnect. Deployments share
no data: messages stored only on the deployment left behind are not moved, and are read
from it after switching back.

Time is passed in: the checks run on a ``Ticker`` (a daemon thread by default; tests pass a
fake one and call its tick), and the probe is injectable.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from typing import Protocol

import requests

from magnetar._validate import check_type
from magnetar.exceptions import PulsarException

from .failover_policy import FailoverPolicy
from .service_info import ServiceInfo, ServiceInfoProvider

__all__ = ["PROBE_PATH", "AutoClusterFailover", "Probe", "ThreadTicker", "Ticker", "http_probe"]

PROBE_PATH = "/admin/v2/clusters"

Probe = Callable[[ServiceInfo, float], bool]
"""``probe(service, timeout_s) -> healthy``."""

log = logging.getLogger("magnetar")


class Ticker(Protocol):
    """Calls ``tick`` every ``interval_s`` until ``tick`` returns False or ``stop`` is called."""

    def start(self, tick: Callable[[], bool], interval_s: float) -> None: ...

    def stop(self) -> None: ...


class ThreadTicker:
    """A ``Ticker`` on a daemon thread (``magnetar-failover``); ``stop`` joins it."""

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, tick: Callable[[], bool], interval_s: float) -> None:
        def run() -> None:
            while not self._stop.wait(interval_s) and tick():
                pass

        self._thread = threading.Thread(target=run, name="magnetar-failover", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()


def http_probe(service: ServiceInfo, timeout_s: float) -> bool:
    """Whether ``service`` answers ``GET /admin/v2/clusters`` below 500 within ``timeout_s``
    (a new connection each time: a kept-alive one could outlive the service)."""
    headers = {"Connection": "close"}
    verify: bool | str = service.tls_trust_certs_file_path or True
    try:
        if service.authentication is not None:
            headers.update(service.authentication._headers())
        resp = requests.get(service.service_url + PROBE_PATH, headers=headers,
                            timeout=timeout_s, verify=verify)  # fmt: skip
    except (requests.exceptions.RequestException, PulsarException) as e:
        log.debug("probe of %s failed: %s", service.service_url, e)
        return False
    return resp.status_code < 500


class AutoClusterFailover(ServiceInfoProvider):
    """pulsar-client's ``AutoClusterFailover(primary, secondary, check_interval_ms=30000,
    failover_threshold=1, switch_back_threshold=1)``: pass it as the ``Client``'s service
    URL. ``probe`` and ``ticker`` (keyword-only, Magnetar's) replace the HTTP probe and the
    background thread.

    Raises ValueError: wrong types (pulsar-client's message), no secondary, a threshold
    below 1 or an interval below 1 ms.
    """

    def __init__(self, primary: ServiceInfo, secondary: list[ServiceInfo],
                 check_interval_ms: int = 30000, failover_threshold: int = 1,
                 switch_back_threshold: int = 1, *, probe: Probe | None = None,
                 ticker: Ticker | None = None) -> None:  # fmt: skip
        check_type(ServiceInfo, primary, "primary")
        check_type(list, secondary, "secondary")
        for info in secondary:
            check_type(ServiceInfo, info, "secondary")
        for name, value in (("check_interval_ms", check_interval_ms),
                            ("failover_threshold", failover_threshold),
                            ("switch_back_threshold", switch_back_threshold)):  # fmt: skip
            check_type(int, value, name)
        if check_interval_ms < 1:
            raise ValueError(f"check_interval_ms must be at least 1, not {check_interval_ms}")
        self._policy = FailoverPolicy(primary, secondary, failover_threshold,
                                      switch_back_threshold)  # fmt: skip
        self._interval_s = check_interval_ms / 1000
        self._probe_timeout_s = min(max(self._interval_s, 1.0), 30.0)
        self._probe: Probe = probe or http_probe
        self._ticker: Ticker = ticker or ThreadTicker()
        self._lock = threading.Lock()
        self._on_update: Callable[[ServiceInfo], None] | None = None
        self._started = False

    @property
    def current(self) -> ServiceInfo:
        """The deployment the client should use now."""
        return self._policy.current

    def initial_service_info(self) -> ServiceInfo:
        """The primary."""
        return self._policy.primary

    def initialize(self, on_service_info_update: Callable[[ServiceInfo], None]) -> None:
        """Start checking every ``check_interval_ms``. Raises ValueError when called twice
        (one provider follows one client)."""
        with self._lock:
            if self._started:
                raise ValueError("this AutoClusterFailover is already used by a client")
            self._started = True
            self._on_update = on_service_info_update
        ref = weakref.WeakMethod(self._tick)
        self._ticker.start(lambda: (tick := ref()) is not None and tick(), self._interval_s)
        weakref.finalize(self, self._ticker.stop)  # a dropped provider stops checking

    def close(self) -> None:
        """Stop checking (joins the thread)."""
        self._ticker.stop()

    def _tick(self) -> bool:
        """One check; calls the client back when it switches. Returns True (keep ticking)."""
        with self._lock:
            target = self._policy.check(lambda s: self._probe(s, self._probe_timeout_s))
            on_update = self._on_update
        if target is not None and on_update is not None:
            log.warning("cluster failover: switching to %s", target.service_url)
            try:
                on_update(target)
            except Exception:  # the client's callback failed: keep checking
                log.exception("switching to %s failed", target.service_url)
        return True
