"""``CryptoKeyReader``, as pulsar-client's: the key files of end-to-end encryption.

Magnetar producers do not encrypt yet (``encryption_key`` raises OperationNotSupported), so
every message is plaintext: a key reader on a consumer or reader is accepted and never used,
and ``Message.encryption_context()`` is None.
"""

from __future__ import annotations

from ._validate import check_type

__all__ = ["CryptoKeyReader"]


class CryptoKeyReader:
    """The paths of a public key (producers encrypt with it) and a private key (consumers
    decrypt with it), PEM files; they are not read here. Raises ValueError (not str)."""

    def __init__(self, public_key_path: str, private_key_path: str) -> None:
        check_type(str, public_key_path, "public_key_path")
        check_type(str, private_key_path, "private_key_path")
        self.public_key_path = public_key_path
        self.private_key_path = private_key_path
