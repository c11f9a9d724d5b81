"""SDK -> HTTP -> handlers -> emulator: an end-to-end encrypted topic. The consumer with
the private key reads the message, one with another key discards it, one without a key
consumes the ciphertext, and what the service stored (peeked) holds no plaintext."""

from __future__ import annotations

import uuid

import pytest
import requests
from crypto_keys import key_reader
from cryptography.hazmat.primitives.asymmetric import ec, rsa

import magnetar as pulsar

pytestmark = pytest.mark.emulator
SECRET = b"the vault code is 4-8-15-16-23-42"


def test_an_encrypted_topic_is_read_with_the_key_discarded_without_and_stored_as_ciphertext(
    client, local_stack, tmp_path
):
    right = key_reader(
        tmp_path, "rsa", rsa.generate_private_key(public_exponent=65537, key_size=2048)
    )
    wrong = key_reader(tmp_path, "ec", ec.generate_private_key(ec.SECP256R1()))
    topic = f"persistent://public/default/encrypted-{uuid.uuid4().hex[:8]}"
    reading = client.subscribe(topic, "right", crypto_key_reader=right)
    discarding = client.subscribe(topic, "wrong", crypto_key_reader=wrong,
                                  crypto_failure_action=pulsar.ConsumerCryptoFailureAction.DISCARD)  # fmt: skip
    consuming = client.subscribe(topic, "raw",
                                 crypto_failure_action=pulsar.ConsumerCryptoFailureAction.CONSUME)  # fmt: skip
    producer = client.create_producer(topic, encryption_key="orders", crypto_key_reader=right)
    producer.send(SECRET, partition_key="customer-7")
    client.create_producer(topic).send(b"in clear")

    msg = reading.receive(10_000)
    assert (msg.data(), msg.partition_key()) == (SECRET, "customer-7")
    assert not msg.encryption_context().is_decryption_failed()
    assert discarding.receive(10_000).data() == b"in clear"  # the encrypted one was skipped
    raw = consuming.receive(10_000)
    assert raw.encryption_context().is_decryption_failed() and SECRET not in raw.data()
    assert raw.partition_key() == "customer-7"  # keys stay in clear (routing, compaction)

    path = topic.replace("://", "/")
    peeked = requests.get(f"{local_stack.url}/admin/v2/{path}/subscription/raw/position/1",
                          timeout=30)  # fmt: skip
    assert peeked.status_code == 200 and peeked.headers["X-Pulsar-Is-Encrypted"] == "true"
    assert SECRET not in peeked.content and peeked.content == raw.data()
