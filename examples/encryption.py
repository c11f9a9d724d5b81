"""An end-to-end encrypted topic: the service stores only ciphertext; keys, properties and
times stay readable, so routing, Key_Shared and compaction keep working. Needs the client's
`encryption` extra (`pip install './sdk[encryption]'`; `make install` has it)."""

import os
import shutil
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives import serialization as pem
from cryptography.hazmat.primitives.asymmetric import rsa

import magnetar as pulsar

key = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # or `openssl genrsa`
folder = Path(tempfile.mkdtemp())
(folder / "public.pem").write_bytes(
    key.public_key().public_bytes(pem.Encoding.PEM, pem.PublicFormat.SubjectPublicKeyInfo)
)
(folder / "private.pem").write_bytes(
    key.private_bytes(pem.Encoding.PEM, pem.PrivateFormat.PKCS8, pem.NoEncryption())
)
keys = pulsar.CryptoKeyReader(str(folder / "public.pem"), str(folder / "private.pem"))

client = pulsar.Client(os.environ.get("MAGNETAR_SERVICE_URL", "http://127.0.0.1:8080"))
consumer = client.subscribe("example-secrets", "vault", crypto_key_reader=keys)
producer = client.create_producer(
    "example-secrets", encryption_key="vault-key", crypto_key_reader=keys
)
producer.send(b"the code is 1234", partition_key="door-1")
msg = consumer.receive(10_000)
keys_used = [k.key for k in msg.encryption_context().keys()]  # noqa: SIM118 (a list, not a dict)
print(msg.data(), keys_used)  # b'the code is 1234' ['vault-key']
consumer.acknowledge(msg)
client.close()
shutil.rmtree(folder)
