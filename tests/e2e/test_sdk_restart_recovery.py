"""Clients ride through a killed and restarted service and a topic deleted and created again:
consumers and readers subscribe again and go on with nothing skipped (message ids are never
reused, so the SDK's duplicate guard never hides a new message), and ``close()`` under load
sends its acks at once."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

import magnetar as pulsar
from magnetar_local.main import build_parser

pytestmark = pytest.mark.emulator

EARLIEST = pulsar.InitialPosition.Earliest
# a restart that loses the state (the point here), also once `magnetar local` keeps it
EPHEMERAL = ["--ephemeral"] if "--ephemeral" in build_parser().format_help() else []


def topic(prefix: str) -> str:
    return f"persistent://public/default/{prefix}-{uuid.uuid4().hex[:8]}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    """``magnetar local`` in a subprocess on one port, killed (SIGKILL) and started again."""

    def __init__(self, home: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items() if k != "MAGNETAR_SERVICE_URL"}
        self.env["MAGNETAR_HOME"] = str(home)
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = [sys.executable, "-m", "magnetar.cli", "local", "--port", str(self.port),
                   *EPHEMERAL]  # fmt: skip
        self.process = subprocess.Popen(command, env=self.env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)  # fmt: skip
        deadline = time.monotonic() + 120
        while not self._healthy():
            assert self.process.poll() is None, f"magnetar local exited {self.process.returncode}"
            assert time.monotonic() < deadline, "magnetar local did not start in 120 s"
            time.sleep(0.1)

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/admin/v2/brokers/health", timeout=1):
                return True
        except OSError:
            return False

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(60)
            self.process = None


@pytest.fixture
def service(tmp_path):
    svc = Service(tmp_path / "magnetar-home")
    svc.start()
    try:
        yield svc
    finally:
        svc.kill()


def acked_backlog(url: str, name: str, subscription: str) -> int:
    path = name.replace("persistent://", "persistent/")
    with urllib.request.urlopen(f"{url}/admin/v2/{path}/stats", timeout=30) as answer:
        return json.loads(answer.read())["subscriptions"][subscription]["msgBacklog"]


def wait_until(predicate, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_service_killed_and_restarted_without_its_state_skips_no_message(service):
    client = pulsar.Client(service.url, operation_timeout_seconds=10)
    name = topic("restart")
    producer = client.create_producer(name)
    before = [producer.send(b"before-%d" % i) for i in range(20)]
    consumer = client.subscribe(name, "s", initial_position=EARLIEST)
    reader = client.create_reader(name, pulsar.MessageId.earliest)
    for _ in before:
        consumer.acknowledge(consumer.receive(10_000))
        reader.read_next(10_000)
    assert wait_until(lambda: acked_backlog(service.url, name, "s") == 0)  # acks stored

    service.kill()
    service.start()  # same port, none of the state
    after = [b"after-%d" % i for i in range(20)]
    again = client.create_producer(name)
    ids = [again.send(p) for p in after]

    assert not {str(i) for i in ids} & {str(i) for i in before}  # ids never reused
    got = [consumer.receive(30_000) for _ in after]
    for msg in got:
        consumer.acknowledge(msg)
    assert [m.data() for m in got] == after  # none taken for one acknowledged before
    assert [reader.read_next(30_000).data() for _ in after] == after
    client.close()


def test_a_consumer_and_a_reader_go_on_in_a_topic_force_deleted_and_created_again(local_stack):
    client = pulsar.Client(local_stack.url, operation_timeout_seconds=10)
    name = topic("recreate")
    producer = client.create_producer(name)
    for i in range(5):
        producer.send(b"old-%d" % i)
    consumer = client.subscribe(name, "s", initial_position=EARLIEST)
    reader = client.create_reader(name, pulsar.MessageId.earliest)
    for _ in range(5):
        consumer.acknowledge(consumer.receive(10_000))
        reader.read_next(10_000)
    producer.close()
    path = name.replace("persistent://", "persistent/")
    delete = urllib.request.Request(f"{local_stack.url}/admin/v2/{path}?force=true",
                                    method="DELETE")  # fmt: skip
    with urllib.request.urlopen(delete, timeout=30) as answer:
        assert answer.status == 204

    new = [b"new-%d" % i for i in range(30)]
    again = client.create_producer(name)  # creates the topic again
    for payload in new:
        again.send(payload)

    got = [consumer.receive(60_000) for _ in new]
    for msg in got:
        consumer.acknowledge(msg)
    assert [m.data() for m in got] == new
    assert [reader.read_next(60_000).data() for _ in new] == new
    client.close()


CLOSE_AFTER_ACKS = 100


def test_close_under_load_sends_its_acks_at_once_and_none_comes_back(local_stack):
    client = pulsar.Client(local_stack.url)  # operation_timeout_seconds 30
    name = topic("close-load")
    stop = threading.Event()

    def stream() -> None:
        producer = client.create_producer(name, batching_enabled=False)
        i = 0
        while not stop.is_set():
            producer.send_async(b"%d" % i, lambda res, mid: None)
            i += 1
            if i % 50 == 0:
                producer.flush()
        producer.flush()

    consumer = client.subscribe(name, "s", consumer_type=pulsar.ConsumerType.Shared,
                                initial_position=EARLIEST)  # fmt: skip
    thread = threading.Thread(target=stream, daemon=True)
    thread.start()
    # a hundred acks while the producer streams: "under load" is the stream going on at the
    # close, not how long it went on before (3 s of it before: 3 CPU-s, most of it the
    # backlog the check below drains)
    acked: set[bytes] = set()
    while len(acked) < CLOSE_AFTER_ACKS:
        msg = consumer.receive(10_000)
        consumer.acknowledge(msg)
        acked.add(msg.data())
    start = time.monotonic()
    consumer.close()
    took = time.monotonic() - start
    stop.set()
    thread.join(30)

    assert took < 3.0  # well under the 30 s operation timeout
    nxt = client.subscribe(name, "s", consumer_type=pulsar.ConsumerType.Shared)
    back = []
    try:
        while True:
            msg = nxt.receive(2000)
            nxt.acknowledge(msg)
            back.append(msg.data())
    except pulsar.Timeout:
        pass
    assert acked and not acked & set(back)
    client.close()
