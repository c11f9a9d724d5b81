"""Redelivery, dead letters and retries: the service holds a negatively acknowledged message
for its delay; after `max_redeliver_count` redeliveries it goes to the dead letter topic;
`reconsume_later` sends it to the retry topic, delivered again after the delay."""

import os
from datetime import timedelta

import magnetar as pulsar

client = pulsar.Client(os.environ.get("MAGNETAR_SERVICE_URL", "http://127.0.0.1:8080"))
work = client.subscribe(
    "example-tasks",
    "work",
    consumer_type=pulsar.ConsumerType.Shared,
    initial_position=pulsar.InitialPosition.Earliest,  # sees what is already there
    negative_ack_redelivery_backoff=pulsar.MultiplierRedeliveryBackoff(500, 60_000, 2),
    unacked_messages_timeout_ms=30_000,  # not acknowledged within 30 s: delivered again
    # a second failed delivery sends it to example-tasks-work-DLQ
    dead_letter_policy=pulsar.ConsumerDeadLetterPolicy(1),
    enable_retry=True,  # also reads example-tasks-work-RETRY
)
earliest = pulsar.InitialPosition.Earliest
dead = client.subscribe("example-tasks-work-DLQ", "ops", initial_position=earliest)
producer = client.create_producer("example-tasks")


def show(msg):
    print(msg.data(), "redelivery count:", msg.redelivery_count(),
          "reconsume times:", msg.properties().get("RECONSUMETIMES"))  # fmt: skip


producer.send(b"poison")
for _ in range(2):  # delivered, nacked, delivered again (redelivery count 1), nacked: a dead letter
    msg = work.receive(10_000)
    show(msg)
    work.negative_acknowledge(msg)  # back after 0.5 s, then 1 s, ... (by redelivery count)

producer.send(b"busy")
msg = work.receive(10_000)
show(msg)
work.reconsume_later(msg, timedelta(seconds=1), {"why": "busy"})  # to the retry topic
msg = work.receive(10_000)  # a second later, from example-tasks-work-RETRY
show(msg)
work.acknowledge(msg)

letter = dead.receive(10_000)  # poison, after its second failed delivery
print("dead letter:", letter.data())
dead.acknowledge(letter)
client.close()
