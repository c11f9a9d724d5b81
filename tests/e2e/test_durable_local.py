"""``magnetar local`` keeps its state in its data directory: killed (SIGKILL) at random
points during produce and acks, or stopped (SIGTERM), it comes back with every acknowledged
send, without the confirmed acks' messages, and with its admin state. Checked by the chaos
lane's independent model (``magnetar_chaos.model``) and its wire observer, fed by a proxy
that stays up across the restarts. The killed services' consumers give their messages back
one consumer lease after they were last seen: the SIGKILL test runs its services with a 10 s
lease (``magnetar local --consumer-lease-ms``; the template's is 60 s), as its drain waits it
out in real time: still longer than an SDK long-poll (5 s), so a live consumer waiting on an
idle topic is not taken for a dead one, and about as long as a restart, so the drain waits
little past it. Each service has a proxy of its own (one observer): a round's client ends
against its killed service (its sends time out, its acks' flush and its close requests take
the operation timeout: about 10 s) while the next rounds run, and cannot reach their
services."""

from __future__ import annotations

import json
import random
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from durable_service import RecordingProxy, Service, where_missing

import magnetar as pulsar
from magnetar.cli.main import main as cli_main
from magnetar_chaos.model import Model
from magnetar_chaos.observer import GatewayObserver
from magnetar_chaos.workload import position_of

pytestmark = pytest.mark.emulator

TOPIC = "persistent://public/default/durable-kills"
SUB = "kept"
KILLS = 3
CONSUMER_LEASE_S = 10.0  # the SIGKILL test's services' CONSUMER_LEASE_MS (template: 60 s)
LEASE_OPTIONS = ("--consumer-lease-ms", str(int(CONSUMER_LEASE_S * 1000)))
DRAIN_S = CONSUMER_LEASE_S + 30.0  # a lease and a margin (long-polls, a loaded machine)
CLOSE_LIMIT_S = 60.0
CONFIRM_LIMIT_S = 60.0


class Traffic:
    """One producer (async sends, batched off) and one Shared consumer acking all it gets,
    feeding ``model`` until ``stop``; on a dead service their calls fail and they end."""

    def __init__(self, url: str, model: Model, first_seq: int) -> None:
        self.model, self.seq = model, first_seq
        self.confirmed = 0  # sends this client's service confirmed
        self.client = pulsar.Client(url, operation_timeout_seconds=5)
        self.stopping = threading.Event()
        self.consumer = self.client.subscribe(
            TOPIC, SUB, consumer_type=pulsar.ConsumerType.Shared,
            initial_position=pulsar.InitialPosition.Earliest,
        )  # fmt: skip
        self.producer = self.client.create_producer(
            TOPIC, batching_enabled=False, block_if_queue_full=True,
            max_pending_messages=50, send_timeout_millis=3000,
        )  # fmt: skip
        self.threads = [threading.Thread(target=self._produce, daemon=True),
                        threading.Thread(target=self._consume, daemon=True)]  # fmt: skip
        for thread in self.threads:
            thread.start()

    def _produce(self) -> None:
        while not self.stopping.is_set():
            payload = f"0:{self.seq}"
            self.seq += 1
            try:
                self.producer.send_async(payload.encode(), self._sent(payload), partition_key="k")
            except pulsar.PulsarException:
                self.model.send_failed(payload)
                return

    def _sent(self, payload: str):
        def done(result, message_id) -> None:
            if result == pulsar.Result.Ok and message_id is not None:
                self.model.sent(payload, "k", position_of(message_id))
                self.confirmed += 1
            else:
                self.model.send_failed(payload)

        return done

    def _consume(self) -> None:
        while not self.stopping.is_set():
            try:
                msg = self.consumer.receive(300)
            except pulsar.Timeout:
                continue
            except pulsar.PulsarException:
                return
            payload = msg.data().decode()
            position = position_of(msg.message_id())
            if self.model.delivered(SUB, payload, "k", position, msg.redelivery_count()):
                self.consumer.acknowledge(msg)
                self.model.ack_requested(SUB, payload)

    def stop(self) -> threading.Thread:
        """Stop the traffic and close the client, in a thread: returned to be ``await_closed``
        (the next rounds run meanwhile)."""
        self.stopping.set()
        closing = threading.Thread(target=self._close, daemon=True)
        closing.start()
        return closing

    def _close(self) -> None:
        for thread in self.threads:
            thread.join(30)
        # closing flushes what acks it can; against a dead service they are lost (and were
        # never confirmed: the model counts only acks the service answered)
        self.client.close()

    @staticmethod
    def await_closed(closing: threading.Thread) -> None:
        """Until the client closed (its sends timed out, then each close request): its
        callbacks feed the model until then."""
        closing.join(CLOSE_LIMIT_S)
        assert not closing.is_alive(), f"the client did not close in {CLOSE_LIMIT_S} s"


def drain(url: str, model: Model, timeout_s: float = DRAIN_S) -> None:
    """Receive and ack on a healthy service until every confirmed send was acked. What the
    killed services had dispatched to consumers that never closed (their close could not
    reach a dead service) comes back only when their lease lapses, ``CONSUMER_LEASE_MS``
    after they were last seen, at the next dispatch after that; a consumer that was idle
    (its watch held its lease) is last seen when the restarted service ends the hold, just
    before the drain starts: ``DRAIN_S`` covers a lease from the drain's start, and a margin.
    (The reader of ``where_missing`` talks to the service, not through the proxy: its
    reads are not dispatches the observer should judge.)"""
    client = pulsar.Client(url)
    consumer = client.subscribe(TOPIC, SUB, consumer_type=pulsar.ConsumerType.Shared)
    deadline = time.monotonic() + timeout_s
    try:
        while not model.done([SUB]) and time.monotonic() < deadline:
            try:
                msg = consumer.receive(1000)
            except pulsar.Timeout:
                continue
            payload = msg.data().decode()
            position = position_of(msg.message_id())
            if model.delivered(SUB, payload, "k", position, msg.redelivery_count()):
                consumer.acknowledge(msg)
                model.ack_requested(SUB, payload)
    finally:
        client.close()


def _await_a_confirmed_send(traffic: Traffic) -> None:
    """Until the new service has confirmed a send: on a loaded machine a fixed pause could
    end before the first send was answered (every round killed before any traffic: a
    failed run with nothing checked), so the kill's random point is taken after it."""
    deadline = time.monotonic() + CONFIRM_LIMIT_S
    while traffic.confirmed == 0:
        assert time.monotonic() < deadline, f"no send confirmed in {CONFIRM_LIMIT_S} s"
        time.sleep(0.05)  # the model is fed by the client's threads: nothing to wait on


@pytest.mark.slow
def test_sigkill_during_produce_and_acks_loses_no_acknowledged_send_and_no_confirmed_ack(
    tmp_path,
):
    model, observer, rng = Model(), GatewayObserver(), random.Random()
    home, data = tmp_path / "home", tmp_path / "data"
    proxies: list[RecordingProxy] = []
    closings: list[threading.Thread] = []
    try:
        service = Service(home, data, *LEASE_OPTIONS)
        for round_ in range(KILLS):
            proxies.append(proxy := RecordingProxy(service.url, observer))
            traffic = Traffic(proxy.url, model, first_seq=round_ * 100_000)
            _await_a_confirmed_send(traffic)
            time.sleep(rng.uniform(0.0, 2.0))  # the kill lands at a random point of the traffic
            service.kill()
            closings.append(traffic.stop())  # against the killed service, through its proxy
            service = Service(home, data, *LEASE_OPTIONS)
        proxies.append(proxy := RecordingProxy(service.url, observer))
        drain(proxy.url, model)
        for closing in closings:  # the last one still ends against its killed service
            Traffic.await_closed(closing)
        where = None if model.done([SUB]) else where_missing(service.url, TOPIC, SUB, model)
        service.terminate()
    finally:
        for proxy in proxies:
            proxy.close()

    report = model.check({SUB: "Shared"}, observer.acked_then_dispatched(), None)
    counts = (model.counts(), observer.summary())
    assert model.confirmed and observer.summary().get("ack 200", 0) > 0, counts
    assert report["acked_sends_delivered"]["ok"], (report["acked_sends_delivered"], where)
    assert report["acked_never_dispatched_again"]["ok"], report["acked_never_dispatched_again"]


def _admin(url: str, method: str, path: str, body: object = None) -> object:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read()
    return json.loads(text) if text else None


FUNCTION = (
    "class Shout(pulsar.Function):\n    def process(self, input, context):\n        return input\n"
)


class Webhook:
    """A local webhook target counting the batches pushed to it."""

    def __init__(self) -> None:
        self.posts = 0
        webhook = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                webhook.posts += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook():
    hook = Webhook()
    yield hook
    hook.close()


def test_admin_state_and_unacked_messages_survive_a_sigterm_restart_and_a_second_service_is_refused(
    tmp_path, capsys, webhook
):
    home, data = tmp_path / "home", tmp_path / "data"
    topic, placed = "persistent://acme/orders/placed", "/admin/v2/persistent/acme/orders/placed"
    audited = "/admin/v2/persistent/acme/orders/audited"
    source = tmp_path / "shout.py"
    source.write_text("import magnetar as pulsar\n" + FUNCTION)
    service = Service(home, data)
    try:
        url = service.url
        _admin(url, "PUT", "/admin/v2/tenants/acme", {"allowedClusters": ["magnetar"]})
        _admin(url, "PUT", "/admin/v2/namespaces/acme/orders")
        _admin(url, "POST", "/admin/v2/namespaces/acme/orders/messageTTL", 3600)
        _admin(url, "PUT", "/admin/v2/persistent/acme/orders/audited")
        target = {"type": "webhook", "url": webhook.url, "secret": "s" * 32}
        _admin(url, "PUT", f"{audited}/triggers/push", {"target": target, "batchSize": 10})
        create = ["functions", "--service-url", url, "create", "--py", str(source),
                  "--classname", "shout.Shout", "--inputs", "persistent://acme/orders/in",
                  "--output", "persistent://acme/orders/out", "--name", "shout",
                  "--tenant", "acme", "--namespace", "orders"]  # fmt: skip
        assert cli_main(create) == 0, capsys.readouterr()
        capsys.readouterr()
        # the command in this process: the service process holds the directory, and the
        # command refuses it before it starts anything (a process of its own cost a start)
        assert cli_main(["local", "--port", "0", "--data-dir", str(data)]) == 1
        refused = capsys.readouterr().err
        assert f"is in use by another `magnetar local` (pid {service.process.pid})" in refused
        client = pulsar.Client(url)
        consumer = client.subscribe(topic, "billing", schema=pulsar.schema.StringSchema())
        producer = client.create_producer(topic, schema=pulsar.schema.StringSchema())
        for text in ("one", "two", "three"):
            producer.send(text)
        consumer.acknowledge(consumer.receive(5000))
        client.close()  # flushes the ack
    finally:
        service.terminate()

    service = Service(home, data)
    try:
        url = service.url
        assert "acme" in _admin(url, "GET", "/admin/v2/tenants")
        assert _admin(url, "GET", "/admin/v2/namespaces/acme/orders/messageTTL") == 3600
        assert topic in _admin(url, "GET", "/admin/v2/persistent/acme/orders")
        assert _admin(url, "GET", f"{placed}/subscriptions") == ["billing"]
        assert _admin(url, "GET", "/admin/v2/schemas/acme/orders/placed/schema")["type"] == "STRING"
        assert _admin(url, "GET", f"{audited}/triggers/push")["target"]["url"] == webhook.url
        capsys.readouterr()
        get = ["functions", "--service-url", url, "get", "--name", "shout",
               "--tenant", "acme", "--namespace", "orders"]  # fmt: skip
        assert cli_main(get) == 0
        assert json.loads(capsys.readouterr().out)["className"] == "shout.Shout"
        client = pulsar.Client(url)
        consumer = client.subscribe(topic, "billing", schema=pulsar.schema.StringSchema())
        assert [consumer.receive(5000).value() for _ in range(2)] == ["two", "three"]
        client.create_producer("persistent://acme/orders/audited").send(b"pushed")
        client.close()
        deadline = time.monotonic() + 30
        while webhook.posts == 0:  # the restored trigger pushes without being PUT again
            assert time.monotonic() < deadline, "the restored trigger never pushed"
            time.sleep(0.05)
    finally:
        service.terminate()
