"""Cluster failover in the SDK (issue 15): ``ServiceInfo``, ``AutoClusterFailover``'s rule
driven tick by tick with a fake ticker and a fake probe, and a ``Client`` built on a
provider following its switches between two in-memory deployments."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

import magnetar as pulsar
from magnetar._consumer import recovery as _recovery
from magnetar._transport.failover import PROBE_PATH, http_probe
from magnetar._transport.failures import JitteredBackoff
from magnetar_local.memory_service import MemoryService

A, B, C = (pulsar.ServiceInfo(f"http://{h}.example:8080") for h in ("a", "b", "c"))


class FakeTicker:
    """A Ticker whose ticks the test runs (one ``tick()`` = one check interval)."""

    def __init__(self) -> None:
        self.tick_fn: Callable[[], bool] | None = None
        self.interval_s: float | None = None
        self.stopped = False

    def start(self, tick: Callable[[], bool], interval_s: float) -> None:
        self.tick_fn, self.interval_s = tick, interval_s

    def stop(self) -> None:
        self.stopped = True

    def tick(self) -> None:
        assert self.tick_fn is not None and self.tick_fn()


class FakeProbe:
    """Health by service URL (healthy unless listed in ``down``); records what it probed."""

    def __init__(self) -> None:
        self.down: set[str] = set()
        self.probed: list[str] = []

    def __call__(self, service: pulsar.ServiceInfo, timeout_s: float) -> bool:
        self.probed.append(service.service_url)
        return service.service_url not in self.down


def failover(probe: FakeProbe, secondary=(B, C), **options):
    ticker = FakeTicker()
    switches: list[pulsar.ServiceInfo] = []
    provider = pulsar.AutoClusterFailover(A, list(secondary), probe=probe, ticker=ticker,
                                          **options)  # fmt: skip
    assert provider.initial_service_info() == A
    provider.initialize(switches.append)
    return provider, ticker, switches


def test_the_primary_is_left_after_failover_threshold_failed_checks_for_the_first_healthy_secondary():
    probe = FakeProbe()
    provider, ticker, switches = failover(probe, failover_threshold=3, check_interval_ms=250)
    assert ticker.interval_s == 0.25
    probe.down = {A.service_url, B.service_url}
    ticker.tick()
    ticker.tick()
    assert switches == [] and provider.current == A
    ticker.tick()
    assert switches == [C] and provider.current == C


def test_a_success_of_the_primary_restarts_the_count_of_failures():
    probe = FakeProbe()
    _, ticker, switches = failover(probe, failover_threshold=2)
    probe.down = {A.service_url}
    ticker.tick()
    probe.down = set()
    ticker.tick()
    probe.down = {A.service_url}
    ticker.tick()
    assert switches == []
    ticker.tick()
    assert switches == [B]


def test_with_no_healthy_secondary_the_client_stays_and_tries_again_at_the_next_check():
    probe = FakeProbe()
    _, ticker, switches = failover(probe)
    probe.down = {A.service_url, B.service_url, C.service_url}
    ticker.tick()
    assert switches == []
    probe.down = {A.service_url, C.service_url}
    ticker.tick()
    assert switches == [B]


def test_the_client_goes_back_after_switch_back_threshold_successes_of_the_primary_in_a_row():
    probe = FakeProbe()
    provider, ticker, switches = failover(probe, switch_back_threshold=2)
    probe.down = {A.service_url}
    ticker.tick()
    assert switches == [B]
    probe.down = set()
    ticker.tick()
    probe.down = {A.service_url}
    ticker.tick()  # the primary failed again: the count starts over
    probe.down = set()
    ticker.tick()
    assert switches == [B] and provider.current == B
    ticker.tick()
    assert switches == [B, A] and provider.current == A


def test_a_failing_secondary_is_left_for_the_next_healthy_one_while_the_primary_is_down():
    probe = FakeProbe()
    _, ticker, switches = failover(probe)
    probe.down = {A.service_url}
    ticker.tick()
    probe.down = {A.service_url, B.service_url}
    ticker.tick()
    assert switches == [B, C]


def test_close_stops_the_ticker_and_a_provider_follows_one_client_only():
    provider, ticker, _ = failover(FakeProbe())
    with pytest.raises(ValueError, match="already used by a client"):
        provider.initialize(lambda info: None)
    provider.close()
    assert ticker.stopped


@pytest.mark.parametrize(("options", "message"), [
    ({"secondary": []}, "at least one secondary"),
    ({"secondary": [B], "failover_threshold": 0}, "failover_threshold must be at least 1"),
    ({"secondary": [B], "switch_back_threshold": 0}, "switch_back_threshold must be at least 1"),
    ({"secondary": [B], "check_interval_ms": 0}, "check_interval_ms must be at least 1"),
    ({"secondary": ["http://b"]}, "Argument secondary is expected to be of type 'ServiceInfo'"),
    ({"secondary": [B], "check_interval_ms": 1.5}, "Argument check_interval_ms is expected"),
])  # fmt: skip
def test_bad_failover_arguments_raise_value_error_saying_what_is_wrong(options, message):
    with pytest.raises(ValueError, match=message):
        pulsar.AutoClusterFailover(A, **options)


def test_service_info_checks_its_url_and_types_and_exposes_read_only_properties():
    token = pulsar.AuthenticationToken("t")
    info = pulsar.ServiceInfo("http://a.example:8080/", token, "/ca.pem")
    assert (info.service_url, info.authentication, info.tls_trust_certs_file_path) == (
        "http://a.example:8080", token, "/ca.pem")  # fmt: skip
    with pytest.raises(AttributeError):
        info.service_url = "http://other"  # type: ignore[misc]
    with pytest.raises(ValueError, match="binary-protocol URL"):
        pulsar.ServiceInfo("pulsar://broker:6650")
    with pytest.raises(ValueError, match="Argument authentication is expected"):
        pulsar.ServiceInfo("http://a", authentication="token")  # type: ignore[arg-type]
    with pytest.raises(pulsar.OperationNotSupported):
        pulsar.ServiceInfo("http://a", pulsar.AuthenticationTLS("/c.pem", "/k.pem"))


def test_the_http_probe_asks_the_cluster_list_and_counts_a_refused_connection_as_down(svc):
    assert http_probe(pulsar.ServiceInfo(svc.url), 2.0)
    assert [r.path for r in svc.recorded("other")] == [PROBE_PATH]
    assert not http_probe(pulsar.ServiceInfo("http://127.0.0.1:9"), 2.0)


class ManualProvider(pulsar.ServiceInfoProvider):
    """Switches when the test says so."""

    def __init__(self, first: pulsar.ServiceInfo) -> None:
        self.first = first
        self.update: Callable[[pulsar.ServiceInfo], None] | None = None
        self.closed = False

    def initial_service_info(self) -> pulsar.ServiceInfo:
        return self.first

    def initialize(self, on_service_info_update) -> None:
        self.update = on_service_info_update

    def close(self) -> None:
        self.closed = True


def test_a_client_on_a_provider_moves_its_exclusive_producer_and_its_consumer_when_told(svc):
    with MemoryService() as other:
        provider = ManualProvider(pulsar.ServiceInfo(svc.url))
        client = pulsar.Client(provider)
        consumer = client.subscribe("t", "s", initial_position=pulsar.InitialPosition.Earliest)
        producer = client.create_producer("t", access_mode=pulsar.ProducerAccessMode.Exclusive)
        producer.send(b"before")
        assert consumer.receive(5000).data() == b"before"

        assert provider.update is not None
        provider.update(pulsar.ServiceInfo(other.url))
        assert client.get_service_info().service_url == other.url
        producer.send(b"after")
        assert consumer.receive(5000).data() == b"after"
        assert len(other.recorded("register")) == 1
        consumer_kinds = [r.kind for r in other.requests
                          if r.kind in ("subscribe", "receive", "ack", "redeliver")]  # fmt: skip
        assert consumer_kinds[0] == "subscribe"  # before any request with the old id
        client.close()
        assert provider.closed


def test_a_provider_whose_initial_service_info_is_not_one_is_refused():
    class Bad(ManualProvider):
        def initial_service_info(self):  # type: ignore[override]
            return "http://a.example"

    with pytest.raises(ValueError, match="Expected a pulsar.ServiceInfo"):
        pulsar.Client(Bad(A))


def test_a_dropped_provider_stops_its_thread():
    provider = pulsar.AutoClusterFailover(A, [B], check_interval_ms=10, probe=lambda s, t: True)
    provider.initialize(lambda info: None)
    del provider
    deadline = time.monotonic() + 5
    while any(t.name == "magnetar-failover" for t in __import__("threading").enumerate()):
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_consumer_pausing_after_failed_receives_follows_a_switch_at_once(svc, monkeypatch):
    # a dead deployment makes the receive loop wait between attempts (up to 5 s): the
    # switch must end that wait, not leave the consumer paused on the new deployment
    monkeypatch.setattr(_recovery, "RECEIVE_RETRY", JitteredBackoff(base=60.0, cap=60.0))
    with MemoryService() as other:
        provider = ManualProvider(pulsar.ServiceInfo(svc.url))
        client = pulsar.Client(provider)
        consumer = client.subscribe("t", "s", initial_position=pulsar.InitialPosition.Earliest)
        assert svc.wait_for(lambda s: s.recorded("receive"))
        svc.gateway.kill()  # the primary dies: the receive fails, the loop pauses 30-60 s
        deadline = time.monotonic() + 10
        while consumer.is_connected():
            assert time.monotonic() < deadline, "the consumer never saw the primary die"
            time.sleep(0.01)

        assert provider.update is not None
        provider.update(pulsar.ServiceInfo(other.url))
        client.create_producer("t").send(b"after")
        assert consumer.receive(10_000).data() == b"after"
        client.close()
