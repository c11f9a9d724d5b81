"""Produce with batching and compression, consume on a Shared subscription, nack one message
and get it again. Run it while `make run` serves: `.venv/bin/python examples/produce_and_consume.py`."""

import os

import magnetar as pulsar  # the pulsar-client API

client = pulsar.Client(os.environ.get("MAGNETAR_SERVICE_URL", "http://127.0.0.1:8080"))
consumer = client.subscribe(
    "example-orders",
    "billing",
    consumer_type=pulsar.ConsumerType.Shared,
    initial_position=pulsar.InitialPosition.Earliest,
    negative_ack_redelivery_delay_ms=1000,
)
producer = client.create_producer(
    "example-orders", batching_enabled=True, compression_type=pulsar.CompressionType.LZ4
)
for i in range(10):
    producer.send_async(
        f"order-{i}".encode(),
        lambda res, msg_id: None,
        partition_key=f"customer-{i % 3}",
        properties={"n": str(i)},
    )
producer.flush()  # batched: the ten messages share one entry

for _ in range(11):  # ten messages, and order-3 once more
    msg = consumer.receive(timeout_millis=10000)
    print(msg.data(), msg.partition_key(), msg.properties(), "redelivered:", msg.redelivery_count())
    if msg.data() == b"order-3" and msg.redelivery_count() == 0:
        consumer.negative_acknowledge(msg)  # comes back after the delay, redelivery_count() + 1
    else:
        consumer.acknowledge(msg)
client.close()
