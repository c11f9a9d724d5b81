"""Records and schemas, as `pulsar.schema` has them: typed fields, JSON and Avro encodings, a
schema registry that versions what producers and consumers declare."""

import os

import magnetar as pulsar
from magnetar.schema import Array, AvroSchema, Integer, JsonSchema, Record, String


class Order(Record):  # typed fields, checked on assignment
    id = Integer(required=True)
    customer = String()
    items = Array(String())


print(Order.schema())  # the Avro definition pulsar-client produces
client = pulsar.Client(os.environ.get("MAGNETAR_SERVICE_URL", "http://127.0.0.1:8080"))
for schema in (JsonSchema(Order), AvroSchema(Order)):  # a topic each: the registry keeps one type
    topic = f"example-orders-{type(schema).__name__.lower()}"
    consumer = client.subscribe(topic, "billing", schema=schema)
    client.create_producer(topic, schema=schema).send(Order(id=1, customer="c-7", items=["book"]))
    msg = consumer.receive(timeout_millis=10000)
    order = msg.value()  # an Order again
    # pulsar-client's form: the version's 8 big-endian bytes as a str of those characters
    version = int.from_bytes(msg.schema_version().encode("latin-1"), "big")
    print(type(schema).__name__, order.id, order.customer, order.items, "version", version)
    consumer.acknowledge(msg)
client.close()
