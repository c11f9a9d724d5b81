"""Key files for the end-to-end encryption tests: a private key written as PEM files and the
``CryptoKeyReader`` that reads them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization

import magnetar as pulsar


def key_reader(directory: Path, name: str, private: Any) -> pulsar.CryptoKeyReader:
    """Write ``private`` (an RSA or EC private key) as ``<name>.pem`` and its public key as
    ``<name>.pub.pem`` in ``directory``; returns the reader of the two files."""
    pub, key = directory / f"{name}.pub.pem", directory / f"{name}.pem"
    pub.write_bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    key.write_bytes(private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))  # fmt: skip
    return pulsar.CryptoKeyReader(str(pub), str(key))
