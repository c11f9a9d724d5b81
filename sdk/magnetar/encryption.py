"""``EncryptionKey`` and ``EncryptionContext``, as pulsar-client 3.13's: what
``Message.encryption_context()`` tells about an encrypted message. Pure data (no crypto)."""

from __future__ import annotations

from magnetar_wire import EntryEncryption, EntryHeader

from ._enums import CompressionType

__all__ = ["EncryptionContext", "EncryptionKey"]


class EncryptionKey:
    """The data key of a message wrapped for one public key: ``key`` (its name), ``value``
    (the wrapped key bytes), ``metadata`` (the producer's key reader's)."""

    def __init__(self, key: str, value: bytes, metadata: dict[str, str]) -> None:
        self._key, self._value, self._metadata = key, value, metadata

    @property
    def key(self) -> str:
        """The name of the public key the data key was wrapped for."""
        return self._key

    @property
    def value(self) -> bytes:
        """The wrapped data key (RSA-OAEP or ECIES, see magnetar._encryption.cipher)."""
        return self._value

    @property
    def metadata(self) -> dict[str, str]:
        """The key's metadata, as the producer's key reader gave it."""
        return dict(self._metadata)

    def __repr__(self) -> str:
        return f"EncryptionKey(key={self._key!r}, value={len(self._value)} bytes, metadata={self._metadata!r})"  # fmt: skip


class EncryptionContext:
    """How a message is encrypted; ``is_decryption_failed()`` when the consumer could not
    decrypt it (``ConsumerCryptoFailureAction.CONSUME``: the payload is still encrypted,
    and still compressed with ``compression_type()``)."""

    def __init__(self, encryption: EntryEncryption, header: EntryHeader, failed: bool) -> None:
        self._encryption, self._header, self._failed = encryption, header, failed

    def keys(self) -> list[EncryptionKey]:
        """The data key wrapped for each public key the producer named."""
        return [EncryptionKey(k.name, k.value, dict(k.metadata)) for k in self._encryption.keys]

    def param(self) -> bytes:
        """The cipher's parameter: the 12-byte AES-GCM nonce (Pulsar's encryption_param)."""
        return self._encryption.param

    def algorithm(self) -> str:
        """The cipher of the payload: ``"AES-256-GCM"``."""
        return self._encryption.algorithm

    def compression_type(self) -> CompressionType:
        """How the payload was compressed before it was encrypted."""
        return CompressionType(int(self._header.codec))

    def uncompressed_message_size(self) -> int:
        """Bytes of the payload (of the whole batch for a batch) before compression."""
        return self._header.uncompressed_len

    def batch_size(self) -> int:
        """Messages in the encrypted batch, or -1 when the entry is no batch."""
        return self._header.count if self._header.batched else -1

    def is_decryption_failed(self) -> bool:
        """True when the consumer could not decrypt the message (CONSUME delivered it)."""
        return self._failed

    def __repr__(self) -> str:
        return (f"EncryptionContext(algorithm={self.algorithm()!r}, keys={self.keys()!r}, "
                f"batch_size={self.batch_size()}, decryption_failed={self._failed})")  # fmt: skip
