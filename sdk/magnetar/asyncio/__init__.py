"""``pulsar.asyncio``: pulsar-client 3.13's asyncio API (``Client``, ``Producer``,
``Consumer``, ``Reader``, ``PulsarException``), over the SDK.

    import magnetar as pulsar

    client = pulsar.asyncio.Client("http://127.0.0.1:8080")
    producer = await client.create_producer("my-topic")
    await producer.send(b"hello")
    await client.close()

On the event loop, without a thread per call: ``Producer.send`` and ``flush`` (futures
settled by the SDK's send callbacks), ``Consumer.receive`` and ``Reader.read_next`` (woken by
the receiver queue), the acknowledgements (queued at once). On ONE executor per client (at
most four threads, joined by ``close``): the calls that are blocking HTTP requests in the
SDK: ``create_producer``, ``subscribe``, ``create_reader``, ``get_topic_partitions``,
``seek``, ``unsubscribe``, ``get_last_message_id``, ``has_message_available``, every
``close``, ``redeliver_unacknowledged_messages``, and ``send`` on a producer made with
``block_if_queue_full=True`` (it may wait for room). The SDK's own threads (the sender
thread of a producer, one receive thread per partition of a consumer) run as with the
synchronous API. Errors are ``pulsar.asyncio.PulsarException`` (``error()``: the
``Result``), as pulsar-client's; wrong argument types raise ``ValueError``/``TypeError``.
"""

from ._bridge import PulsarException, _set_future
from ._client import Client
from ._consumer import Consumer, Reader
from ._producer import Producer

__all__ = ["Client", "Consumer", "Producer", "PulsarException", "Reader", "_set_future"]
