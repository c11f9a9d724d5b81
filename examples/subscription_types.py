"""Every subscription type, a reader, a regex subscription and a partitioned topic."""

import os
import re

import requests

import magnetar as pulsar

API = os.environ.get("MAGNETAR_SERVICE_URL", "http://127.0.0.1:8080")
client = pulsar.Client(API)
earliest = pulsar.InitialPosition.Earliest
# Key_Shared: per-key order across consumers; Failover: one active consumer at a time
ks = client.subscribe("example-types", "ship", consumer_type=pulsar.ConsumerType.KeyShared,
                      initial_position=earliest)  # fmt: skip
fo = client.subscribe("example-types", "audit", consumer_type=pulsar.ConsumerType.Failover,
                      initial_position=earliest)  # fmt: skip
client.create_producer("example-types").send(b"hello", partition_key="k1")
for consumer in (ks, fo):
    msg = consumer.receive(10_000)
    print(consumer.subscription_name(), msg.data())
    consumer.acknowledge(msg)

reader = client.create_reader("example-types", pulsar.MessageId.earliest)  # holds nothing back
print("reader:", reader.read_next(5000).data())

# 4 partitions (204 No Content); once they exist, 409 Conflict: the partitions stay as they are
requests.put(f"{API}/admin/v2/persistent/public/default/example-clicks/partitions", json=4)
clicks = client.subscribe("example-clicks", "count", initial_position=earliest)
client.create_producer("example-clicks").send(b"click", partition_key="user-1")  # key -> partition
msg = clicks.receive(10_000)
print("partitioned:", msg.data(), "from", msg.topic_name())
clicks.acknowledge(msg)

# a regex subscription covers every topic whose name matches (those created later too, found
# every pattern_auto_discovery_period seconds: 60 by default, as pulsar-client)
to_a, to_b = client.create_producer("example-regex-a"), client.create_producer("example-regex-b")
pattern = re.compile("persistent://public/default/example-regex-.*")
every = client.subscribe(pattern, "all", initial_position=earliest)
to_a.send(b"to a")
to_b.send(b"to b")
got = set()
while got != {b"to a", b"to b"}:  # the two topics' messages come in either order
    msg = every.receive(10_000)
    got.add(msg.data())
    every.acknowledge(msg)
print("regex:", sorted(got))
client.close()
