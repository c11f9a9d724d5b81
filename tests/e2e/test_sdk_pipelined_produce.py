"""Producer pipelining through the whole stack: unbatched sends queued while a request is in
flight travel together in multi-entry requests, each message its own entry, in order."""

from __future__ import annotations

import threading
import uuid

import magnetar as pulsar

COUNT = 60


def test_unbatched_async_sends_are_stored_in_order_with_fewer_requests_than_messages(
    local_stack, client, monkeypatch
):
    topic = f"persistent://public/default/pipelined-{uuid.uuid4().hex[:8]}"
    produces: list[str] = []
    invoke = local_stack.gateway.invoke

    def counted(request, *args, **kwargs):
        if request.method == "POST" and request.raw_path.endswith("/messages"):
            produces.append(request.raw_path)
        return invoke(request, *args, **kwargs)

    monkeypatch.setattr(local_stack.gateway, "invoke", counted)
    producer = client.create_producer(topic, batching_enabled=False)
    ids: list[tuple[int, pulsar.Result, pulsar.MessageId]] = []
    done = threading.Event()

    def callback(i: int):
        def complete(result, msg_id):
            ids.append((i, result, msg_id))
            if len(ids) == COUNT:
                done.set()

        return complete

    for i in range(COUNT):
        producer.send_async(b"m%d" % i, callback(i))
    assert done.wait(60)
    assert [i for i, _, _ in ids] == list(range(COUNT))
    assert all(result is pulsar.Result.Ok for _, result, _ in ids)
    entry_ids = [msg_id.entry_id() for _, _, msg_id in ids]
    # in order; not always consecutive: a request that outlives its id reservation (a loaded
    # machine) leaves the ids it did not use as holes (docs/architecture/producing.md)
    assert entry_ids == sorted(set(entry_ids))
    assert all(msg_id.batch_index() == -1 for _, _, msg_id in ids)
    assert 1 <= len(produces) < COUNT / 2
    reader = client.create_reader(topic, pulsar.MessageId.earliest)
    assert [reader.read_next(5000).data() for _ in range(COUNT)] == [
        b"m%d" % i for i in range(COUNT)
    ]
    producer.close()
