"""``NotifyServer.disconnect_stale``: a restarted durable ``magnetar local`` sends the
channel function ``$disconnect`` for each connection its notify table still lists but no
socket of its own holds (they died with the killed process), so their watches' lease holds
end; connections it holds are left alone."""

from __future__ import annotations

import boto3
from moto import mock_aws

from magnetar_core.domain.notify import CONNECTION_PREFIX, CONNECTION_SK
from magnetar_local.notify import NotifyServer

TABLE = "notify"


def _table_with(dynamodb, items: list[tuple[str, str]]) -> None:
    dynamodb.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )  # fmt: skip
    for pk, sk in items:
        dynamodb.put_item(TableName=TABLE, Item={"pk": {"S": pk}, "sk": {"S": sk}})


def test_connections_recorded_by_a_killed_service_get_a_disconnect_and_open_ones_do_not():
    with mock_aws():
        session = boto3.Session(aws_access_key_id="k", aws_secret_access_key="s",
                                region_name="us-east-1")  # fmt: skip
        dynamodb = session.client("dynamodb")
        _table_with(dynamodb, [
            (CONNECTION_PREFIX + "dead-1", CONNECTION_SK),
            (CONNECTION_PREFIX + "dead-1", "persistent://public/default/t|s|c1"),
            (CONNECTION_PREFIX + "dead-2", CONNECTION_SK),
            (CONNECTION_PREFIX + "alive", CONNECTION_SK),
            ("persistent://public/default/t", "dead-1|s|c1"),
        ])  # fmt: skip
        events: list[dict] = []
        server = NotifyServer(invoke=lambda event: events.append(event) or {"statusCode": 200})
        server._open["alive"] = object()  # type: ignore[assignment] # a socket this run holds

        assert server.disconnect_stale(dynamodb, TABLE) == 2

    sent = sorted((e["requestContext"]["routeKey"], e["requestContext"]["connectionId"])
                  for e in events)  # fmt: skip
    assert sent == [("$disconnect", "dead-1"), ("$disconnect", "dead-2")]
