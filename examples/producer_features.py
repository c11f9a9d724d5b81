"""Producer features as in Pulsar: a namespace with deduplication, an exclusive named
producer, chunking of a payload larger than 5 MB, a tombstone (a message without a value)."""

import os

import requests

import magnetar as pulsar

API = os.environ.get("MAGNETAR_SERVICE_URL", "http://127.0.0.1:8080")
# topics live in namespaces that exist, as in Pulsar (public/default is there from the start):
# a tenant on the deployment's cluster, then its namespace (409 Conflict when they exist)
requests.put(f"{API}/admin/v2/tenants/example", json={"allowedClusters": ["magnetar"]})
requests.put(f"{API}/admin/v2/namespaces/example/orders")
# deduplication for the namespace: resends of a sequence id already stored are dropped
requests.post(f"{API}/admin/v2/namespaces/example/orders/deduplication", json=True)

client = pulsar.Client(API)
TOPIC = "persistent://example/orders/ledger"
consumer = client.subscribe(TOPIC, "audit", initial_position=pulsar.InitialPosition.Earliest)
p = client.create_producer(
    TOPIC,
    producer_name="billing",
    access_mode=pulsar.ProducerAccessMode.Exclusive,  # a second one gets ProducerFenced
    compression_type=pulsar.CompressionType.ZSTD,
    chunking_enabled=True,  # payloads over 5 MB go in chunks and arrive whole
)
try:
    client.create_producer(TOPIC, access_mode=pulsar.ProducerAccessMode.Exclusive)
except pulsar.ProducerFenced:
    print("a second exclusive producer is fenced")
p.send(b"x" * 6_000_000)
p.send(None, partition_key="customer-7")  # a tombstone
last = p.last_sequence_id()
p.close()

again = client.create_producer(TOPIC, producer_name="billing")  # the same name, dedup on:
print("the sequence continues:", again.last_sequence_id() == last)  # it knows where it was

big = consumer.receive(10_000)
print("chunked message arrives whole:", len(big.data()))
tombstone = consumer.receive(10_000)
print("tombstone:", tombstone.partition_key(), tombstone.has_null_value())
consumer.acknowledge(big)
consumer.acknowledge(tombstone)
client.close()
