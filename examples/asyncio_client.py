"""pulsar-client's asyncio API (`pulsar.asyncio`): no thread of its own for send and receive."""

import asyncio
import os

import magnetar as pulsar


async def main():
    client = pulsar.asyncio.Client(os.environ.get("MAGNETAR_SERVICE_URL", "http://127.0.0.1:8080"))
    consumer = await client.subscribe("example-greetings", "async-sub")
    producer = await client.create_producer("example-greetings")  # batching on, as pulsar-client's
    await producer.send(b"hello")
    msg = await consumer.receive()  # waits on the event loop, no thread
    await consumer.acknowledge(msg)
    print(msg.data())
    await client.close()


asyncio.run(main())
