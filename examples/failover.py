"""Cluster failover: where pulsar-client takes the service URL, `Client` also takes a
`ServiceInfoProvider`, such as `AutoClusterFailover`, to move between two Magnetar
deployments (e.g. two regions)."""

import os

import magnetar as pulsar

URL = os.environ.get("MAGNETAR_SERVICE_URL", "http://127.0.0.1:8080")
primary = pulsar.ServiceInfo(URL)  # here: make run's; e.g. eu-west-1's API
secondary = pulsar.ServiceInfo(
    "http://127.0.0.1:8081",  # e.g. us-east-1's, with its own token
    pulsar.AuthenticationToken("a token of that deployment"),
)
provider = pulsar.AutoClusterFailover(
    primary, [secondary], check_interval_ms=5000, failover_threshold=3, switch_back_threshold=3
)
client = pulsar.Client(provider)
producer = client.create_producer("example-failover")
producer.send(b"sent to the deployment in use")
print("in use: the primary" if client.get_service_info().service_url == URL else "the secondary")
client.close()
