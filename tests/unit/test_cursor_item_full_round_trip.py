"""The DynamoDB cursor item of a cursor with every part populated: same item as before the
cursor was split into parts (the golden item below was written by the mixin-based
CursorState) but for the compact range sets, a lossless round trip, and the item as written
before either change still read."""

from magnetar_core.adapters.aws.cursors import cursor_from_item, cursor_to_item
from magnetar_core.domain.cursor.state import KEY_SHARED, ConsumerInfo, CursorState
from magnetar_core.domain.dead_letter import DeadLetter, DeadLetterPolicy

LOW, HIGH = 100, 40_000
HASHES = {0: (LOW, HIGH, LOW), 1: (HIGH,), 2: (LOW, HIGH), 3: (HIGH,), 4: (LOW,)}


def hashes_of(ids):
    return {e: HASHES[e] for e in ids if e in HASHES}


def populated():
    state = CursorState.new("orders", KEY_SHARED, last_entry_id=-1, earliest=True)
    state.add_consumer(ConsumerInfo("c1", "one", 1000, 2000, 2, True), KEY_SHARED, None, hashes_of)
    state.dispatch_key_shared("c1", sorted(HASHES.items()), 100, 100)
    state.add_consumer(ConsumerInfo("c2", "two", 1500, 2500), KEY_SHARED, None, hashes_of)
    state.acknowledge([(1, -1), (0, 1)], hashes_of)
    state.negative_acknowledge("c1", [3], hashes_of)
    state.dispatch_key_shared("c2", [(3, HASHES[3])], 100, 100)
    state.dispatch_key_shared("c1", [(5, (LOW, HIGH))], 100, 100)
    state.defer(7, 5_000)
    state.defer(8, 6_000)
    state.released = {5_000, 9_000}
    state.released_max = 4_000
    state.timer_id = "timer-1"
    state.read_compacted = True
    state.durable = False
    state.dead_letter_policy = DeadLetterPolicy(3, "persistent://acme/orders/dlq", "audit")
    state.dead_letters = [DeadLetter(4, 6, (0, 2), 2, "persistent://acme/orders/dlq", "audit")]
    state.dead_letter_next_sequence = 6
    state.dead_letter_id = "dlq-1"
    state.version = 11
    return state


PK = "persistent://acme/orders/in-partition-0|3"
# The item's JSON attribute exactly as the mixin-based CursorState wrote it (same bytes).
GOLDEN_BODY = (
    '{"acked":[[1,1]],"backs":{"0":[1]},"bsize":{"0":3,"2":2,"5":2},"redeliver":[[3,3'
    '],[5,5]],"leases":{"c1":[[0,0],[2,2],[4,5]]},"counts":{"3":1},"consumers":{"c1":'
    '{"name":"one","since":1000,"seen":2000,"prio":2,"spread":true},"c2":{"name":"two'
    '","since":1500,"seen":2500}},"ks":{"s":{"m":"auto_split","r":[[32767,"c2"],[6553'
    '5,"c1"]]},"d":{"o":false,"e":[[100,"c1",4,0]]},"m":{"c1":{"5":"2"}}},"dl":{"5000'
    '":[[7,7]],"6000":[[8,8]]},"drel":4000,"dlp":{"max":3,"topic":"persistent://acme/'
    'orders/dlq","init":"audit"},"dlq":{"id":"dlq-1","next":6,"items":[[4,6,[0,2],2,"'
    'persistent://acme/orders/dlq","audit"]]},"tid":"timer-1","rc":true}'
)
GOLDEN = {
    "pk": {"S": PK},
    "sub": {"S": "orders"},
    "ver": {"N": "12"},
    "type": {"S": "Key_Shared"},
    "md": {"N": "-1"},
    "rp": {"N": "6"},
    "nc": {"N": "2"},
    "dur": {"BOOL": False},
    "st": {"S": GOLDEN_BODY},
    "rel": {"NS": ["5000", "9000"]},
}
# The same cursor now: the acknowledged, redelivery and lease range sets as gaps and lengths.
COMPACT = {
    **GOLDEN,
    "st": {
        "S": GOLDEN_BODY.replace('"acked":[[1,1]]', '"acked":[1,0]')
        .replace('"redeliver":[[3,3],[5,5]]', '"redeliver":[3,0,2,0]')
        .replace('"c1":[[0,0],[2,2],[4,5]]', '"c1":[0,0,2,0,2,1]')
    },
}


def test_a_fully_populated_cursor_writes_the_item_it_always_wrote_with_compact_range_sets():
    assert cursor_to_item(PK, populated()) == COMPACT


def test_a_fully_populated_cursor_survives_the_item_round_trip():
    state = populated()
    back = cursor_from_item(cursor_to_item(PK, state))
    assert back.version == state.version + 1
    back.version = state.version
    assert back.key_shared.to_dict() == state.key_shared.to_dict()
    back.key_shared = state.key_shared  # selectors have no equality; their JSON is equal
    assert back == state
    assert cursor_to_item(PK, back) == COMPACT


def test_an_item_written_before_the_split_loads_into_every_part():
    back = cursor_from_item(GOLDEN)
    assert (back.acks.mark_delete, back.acks.acked.to_list()) == (-1, [[1, 1]])
    assert back.acks.batch_acks == {0: {1}}
    assert (back.reads.read_position, back.reads.redelivery_counts) == (6, {3: 1})
    assert set(back.roster.consumers) == {"c1", "c2"} and set(back.roster.leases) == {"c1"}
    assert (back.delays.released, back.delays.released_max) == ({5_000, 9_000}, 4_000)
    assert back.delays.timer_id == "timer-1"
    assert (back.outbox.producer_id, back.outbox.next_sequence) == ("dlq-1", 6)
    assert [d.entry_id for d in back.outbox.items] == [6]
    assert back.key_shared.masks == {"c1": {5: {1}}}
    assert back.key_shared.draining_at("c1")
    assert (back.durable, back.read_compacted) == (False, True)
