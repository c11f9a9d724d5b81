"""A table view: the latest value of each key of a topic, kept up to date."""

import os
import threading

import magnetar as pulsar

client = pulsar.Client(os.environ.get("MAGNETAR_SERVICE_URL", "http://127.0.0.1:8080"))
prices = client.create_producer("example-prices")
prices.send(b"1.10", partition_key="EUR")
prices.send(b"0.85", partition_key="GBP")
view = client.create_table_view("example-prices", schema=pulsar.StringSchema())
print(view.get("EUR"), view.get("GBP"), len(view))  # 1.10 0.85 2
gone = threading.Event()
view.for_each_and_listen(lambda key, value: key == "GBP" and not value and gone.set())
prices.send(None, partition_key="GBP")  # a tombstone: the key leaves the view
gone.wait(10)
print(view.get("GBP"), len(view))  # None 1
view.close()
client.close()
