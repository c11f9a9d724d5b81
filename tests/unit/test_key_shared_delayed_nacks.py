"""Key_Shared per-key order when a consumer nacks its part of a split batch with a delay
(reliability finding 5, found by ``magnetar chaos`` with dying handlers): the delay holds
back the nacked messages only, never another consumer's part of the same entry, whose keys'
later entries would otherwise be delivered first. Pure cursor tests, then the same sequence
through the HTTP API on the memory service."""

from __future__ import annotations

import json

from edge_http import call

from magnetar_core.adapters.aws.cursors import cursor_from_item, cursor_to_item
from magnetar_core.domain.cursor.state import KEY_SHARED, ConsumerInfo, CursorState, Delivery
from magnetar_core.domain.keyshared.hashing import sticky_key_hash

LOW, HIGH = 100, 40_000  # with two AUTO_SPLIT consumers: c2 owns LOW, c1 HIGH
BUCKET = 5_000  # the due bucket of a nack with a delay (epoch ms; nothing released yet)
HASHES = {0: (LOW, HIGH, HIGH, LOW), 1: (LOW,), 2: (HIGH,)}  # entry 0: a batch split in two
PATH = "persistent/public/default/ko"


def split_entry_cursor() -> CursorState:
    """c1 and c2 on Key_Shared; c1 got its part of entry 0 (indexes 1, 2), c2 nothing yet
    (its part, 0 and 3, waits in the redelivery set for its next receive)."""
    state = CursorState.new("s", KEY_SHARED, last_entry_id=-1, earliest=True)
    for cid in ("c1", "c2"):
        state.add_consumer(ConsumerInfo(cid, cid, 0, 0), KEY_SHARED, None, HASHES.get)
    assert receive(state, "c1", max_messages=2) == [Delivery(0, 0, (1, 2))]
    return state


def receive(state: CursorState, cid: str, max_messages: int = 100) -> list[Delivery]:
    redeliveries, _ = state.key_shared_window(500)
    candidates = [(e, HASHES[e]) for e in redeliveries]
    candidates += [(e, h) for e, h in HASHES.items() if e >= state.read_position]
    return state.dispatch_key_shared(cid, candidates, max_messages, 1_000)


def nack_with_delay(state: CursorState, cid: str, entry_id: int) -> int:
    return state.negative_acknowledge(cid, [entry_id], HASHES.get, lambda count: BUCKET)


def test_a_delayed_nack_of_one_consumers_part_leaves_the_other_part_available_in_order():
    state = split_entry_cursor()
    assert nack_with_delay(state, "c1", 0) == 1

    # c2's part of entry 0 first: before the fix entry 0 waited whole and c2 got entry 1
    # (c2's part was never delivered: its count stays 0, only c1's nacked part counts)
    assert receive(state, "c2") == [Delivery(0, 0, (0, 3)), Delivery(1, 0, None)]
    assert state.key_shared.delayed == {0: {1, 2}}


def test_a_part_sent_back_by_a_lost_receive_is_not_held_back_by_anothers_delayed_nack():
    state = split_entry_cursor()
    assert receive(state, "c2", max_messages=2) == [Delivery(0, 0, (0, 3))]  # answer lost
    nack_with_delay(state, "c1", 0)
    assert state.redeliver_all("c2", HASHES.get) == 1  # the SDK sends its lease back

    # c2's part went back once (its lost receive), c1's nack does not count it
    assert receive(state, "c2") == [Delivery(0, 1, (0, 3)), Delivery(1, 0, None)]


def test_the_nacked_part_comes_back_to_its_consumer_once_its_bucket_is_released():
    state = split_entry_cursor()
    nack_with_delay(state, "c1", 0)
    receive(state, "c2")
    assert receive(state, "c1") == [Delivery(2, 0, None)]  # its part of entry 0 waits

    state.released = {BUCKET}
    assert state.consume_releases(BUCKET) == 1
    assert state.key_shared.delayed == {}
    assert receive(state, "c1") == [Delivery(0, 1, (1, 2))]


def test_a_nack_of_a_whole_entry_delays_it_whole_without_a_delay_mask():
    state = split_entry_cursor()
    receive(state, "c2")
    state.acknowledge([(0, 0), (0, 3)])  # c2's part settled: c1 holds all that is left
    nack_with_delay(state, "c1", 0)

    assert (state.key_shared.delayed, state.delayed_count()) == ({}, 1)
    assert receive(state, "c1") == [Delivery(2, 0, None)]


def test_delay_masks_survive_the_cursor_item_and_go_with_the_entrys_ack():
    state = split_entry_cursor()
    nack_with_delay(state, "c1", 0)
    item = cursor_to_item("t", state)
    assert json.loads(item["st"]["S"])["ks"]["dm"] == {"0": "6"}  # bits 1 and 2
    state = cursor_from_item(item)
    assert state.key_shared.delayed == {0: {1, 2}}

    receive(state, "c2")
    state.acknowledge([(0, 0), (0, 1), (0, 2), (0, 3)])
    assert (state.key_shared.delayed, state.delayed_count()) == ({}, 0)


# -- the HTTP API on the memory service --------------------------------------------------


def two_keys() -> tuple[str, str]:
    """A key of each half of AUTO_SPLIT's range (two consumers: one half each)."""
    keys = [f"k{i}" for i in range(50)]
    low = next(k for k in keys if sticky_key_hash(k) < 32_768)
    high = next(k for k in keys if sticky_key_hash(k) >= 32_768)
    return low, high


def post(svc, path: str, body: dict) -> dict:
    status, answer, _ = call(f"{svc.url}/v1/{PATH}{path}", body=json.dumps(body).encode())
    assert status == 200, answer
    return answer


def test_through_the_api_a_delayed_nack_of_one_part_never_lets_a_later_entry_overtake(svc):
    keys = two_keys()
    consumers = [post(svc, "/subscriptions/s/consumers",
                      {"subscriptionType": "Key_Shared", "initialPosition": "Earliest"})
                 ["consumerId"] for _ in range(2)]  # fmt: skip
    batch = [{"payload": "YQ==", "key": keys[i % 2]} for i in range(4)]
    post(svc, "/messages", {"messages": batch})  # one entry, both consumers' keys
    base = "/subscriptions/s/consumers"
    receive = {"maxMessages": 100, "waitMs": 0, "format": "entry"}
    [entry] = post(svc, f"{base}/{consumers[0]}/receive", receive)["entries"]
    assert entry["batchIndexes"] is not None  # its part of the batch only
    nacked = f"{entry['ledgerId']}:0:-1:-1"
    post(svc, f"{base}/{consumers[0]}/nack", {"messageIds": [nacked], "delayMs": 60_000})
    post(svc, "/messages", {"messages": [{"payload": "Yg==", "key": k} for k in keys]})

    second = post(svc, f"{base}/{consumers[1]}/receive", receive)
    assert [e["entryId"] for e in second["entries"]] == [0, 1]
    other = sorted(set(range(4)) - set(entry["batchIndexes"]))
    assert second["entries"][0]["batchIndexes"] == other
