"""A consumer id or a producer name is not a credential (issue 12): consumers and
exclusive producers are bound to the role that registered them; another role, even one
with consume/produce on the topic and the id from the stats, is refused (403) and changes
nothing."""

from __future__ import annotations

import requests
from auth_support import auth_service, bearer

V1 = "/v1/persistent/public/default/t"
ALICE, MALLORY = bearer("alice"), bearer("mallory")
GRANTS = {"alice": ["produce", "consume"], "mallory": ["produce", "consume"]}


def _post(url: str, headers: dict[str, str], body: object = None) -> requests.Response:
    return requests.post(url, json=body if body is not None else {}, headers=headers, timeout=5)


def _subscription(svc, name: str = "sub") -> dict:
    stats = requests.get(
        f"{svc.url}/admin/v2/persistent/public/default/t/stats", headers=bearer("admin"), timeout=5
    ).json()
    return stats["subscriptions"][name]


def test_another_role_cannot_act_on_a_consumer_whose_id_the_stats_show():
    with auth_service(**GRANTS) as svc:
        subscribe = {"subscriptionType": "Exclusive", "initialPosition": "Earliest"}
        handle = _post(svc.url + V1 + "/subscriptions/sub/consumers", ALICE, subscribe)
        assert handle.status_code == 200, handle.text
        for text in ("a", "b"):
            sent = _post(svc.url + V1 + "/messages", ALICE, {"messages": [{"value": text}]})
            assert sent.status_code == 200, sent.text
        listed = _subscription(svc)
        consumer_id = listed["consumers"][0]["consumerId"]
        assert consumer_id == handle.json()["consumerId"]
        consumer = f"{svc.url}{V1}/subscriptions/sub/consumers/{consumer_id}"
        attacks = [
            ("post", "/receive", {"maxMessages": 10, "waitMs": 0}),
            ("post", "/seek", {"timestamp": 9_000_000_000_000}),
            ("post", "/ack", {"messageIds": ["1:0:-1:-1"], "cumulative": True}),
            ("post", "/nack", {"messageIds": ["1:0:-1:-1"]}),
            ("post", "/redeliver", {}),
            ("post", "/heartbeat", {}),
            ("post", "/unsubscribe", {}),
            ("delete", "", None),
        ]
        for method, verb, body in attacks:
            answer = requests.request(
                method, consumer + verb, json=body, headers=MALLORY, timeout=5
            )
            assert answer.status_code == 403, (verb, answer.text)
            assert answer.json()["error"] == "AuthorizationError"
            assert "another role registered it" in answer.json()["message"]
        after = _subscription(svc)
        assert after["msgBacklog"] == listed["msgBacklog"] == 2
        assert [c["consumerId"] for c in after["consumers"]] == [consumer_id]
        assert after["markDeletePosition"] == listed["markDeletePosition"]
        received = _post(consumer + "/receive", ALICE, {"maxMessages": 10, "waitMs": 0})
        assert received.status_code == 200, received.text
        assert len(received.json()["messages"]) == 2


def test_another_role_cannot_renew_release_or_take_over_an_exclusive_producers_name():
    with auth_service(**GRANTS) as svc:
        producers = svc.url + V1 + "/producers"
        held = _post(producers, ALICE, {"producerName": "ledger", "accessMode": "Exclusive"})
        assert held.status_code == 200, held.text
        epoch = held.json()["epoch"]
        renew = f"{producers}/ledger/heartbeat?epoch={epoch}"
        assert _post(renew, MALLORY).status_code == 403
        release = requests.delete(f"{producers}/ledger?epoch={epoch}", headers=MALLORY, timeout=5)
        assert release.status_code == 403
        same_name = _post(producers, MALLORY, {"producerName": "ledger", "accessMode": "Exclusive"})
        assert same_name.json()["error"] == "ProducerFenced", same_name.text
        renewed = _post(renew, ALICE)
        assert renewed.status_code == 200 and renewed.json()["epoch"] == epoch, renewed.text
