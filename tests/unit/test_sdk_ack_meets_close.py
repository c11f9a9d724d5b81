"""An ``acknowledge`` that meets the consumer's close (another thread closes it between the
ack's open check and its queueing) is refused with AlreadyClosed, as pulsar-client refuses an
ack on a closed consumer: never accepted and then dropped, with the message coming back to
an application that was told it was acknowledged (on the in-memory service)."""

from __future__ import annotations

import threading

import magnetar as pulsar

TOPIC = "persistent://public/default/ack-meets-close"
SHARED = pulsar.ConsumerType.Shared


def test_an_ack_that_meets_the_close_is_refused_and_its_message_comes_again(client):
    consumer = client.subscribe(TOPIC, "s", consumer_type=SHARED)
    producer = client.create_producer(TOPIC)
    producer.send(b"m")
    producer.close()
    msg = consumer.receive(10_000)
    checked, closed = threading.Event(), threading.Event()
    resolve = consumer._resolve

    def held(message):  # the ack passed its open check; the close runs before it goes on
        found = resolve(message)
        checked.set()
        assert closed.wait(30)
        return found

    consumer._resolve = held
    outcome: list[str] = []

    def ack() -> None:
        try:
            consumer.acknowledge(msg)
            outcome.append("accepted")
        except pulsar.AlreadyClosed:
            outcome.append("refused")

    acking = threading.Thread(target=ack)
    acking.start()
    assert checked.wait(30)
    consumer.close()
    closed.set()
    acking.join(30)
    assert outcome == ["refused"]
    again = client.subscribe(TOPIC, "s", consumer_type=SHARED)
    assert again.receive(10_000).data() == b"m"  # not acknowledged: it comes again
    again.close()
