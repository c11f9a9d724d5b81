"""The data of the entry format: messages, headers, metadata (see docs/entry-format.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .compression import Codec

HEADER_SIZE = 28


@dataclass(frozen=True)
class ChunkInfo:
    """One chunk of a large message split over several entries (Pulsar chunking)."""

    uuid: str
    chunk_id: int
    total_chunks: int
    total_size: int


@dataclass(frozen=True)
class DataKey:
    """The entry's data key encrypted for one named public key (Pulsar's ``EncryptionKeys``):
    ``name`` as the producer named it, ``value`` the wrapped key bytes, ``metadata`` the key
    reader's metadata for that key."""

    name: str
    value: bytes
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class EntryEncryption:
    """How an entry's stored payload section is encrypted (end-to-end encryption): the
    ``algorithm`` name, its ``param`` (the AES-GCM nonce, Pulsar's ``encryption_param``) and
    the data key wrapped for each public key. Only a consumer with a private key reads it."""

    algorithm: str
    param: bytes
    keys: tuple[DataKey, ...]


@dataclass(frozen=True)
class EntryMessage:
    """One message as the producer built it; ``payload`` is ``b""`` for a null value."""

    payload: bytes = b""
    sequence_id: int = 0
    publish_time_ms: int = 0
    key: str | None = None
    ordering_key: bytes | None = None
    properties: Mapping[str, str] = field(default_factory=dict)
    event_time_ms: int = 0
    deliver_at_ms: int = 0
    null_value: bool = False
    chunk: ChunkInfo | None = None
    schema_version: int | None = None


@dataclass(frozen=True)
class EntryHeader:
    """The fixed 28-byte header. Lengths are in bytes; ``crc32c`` is the stored checksum."""

    version: int
    codec: Codec
    batched: bool
    count: int
    metadata_len: int
    payload_len: int
    uncompressed_len: int
    crc32c: int
    encrypted: bool = False

    @property
    def entry_size(self) -> int:
        """Total entry length in bytes: header + metadata + stored payload section."""
        return HEADER_SIZE + self.metadata_len + self.payload_len


@dataclass(frozen=True)
class MessageMeta:
    """One message's metadata without its payload; ``size`` is its uncompressed payload length."""

    size: int
    sequence_id: int
    publish_time_ms: int
    key: str | None
    ordering_key: bytes | None
    properties: Mapping[str, str]
    event_time_ms: int
    deliver_at_ms: int
    null_value: bool
    chunk: ChunkInfo | None
    schema_version: int | None = None


@dataclass(frozen=True)
class EntryMetadata:
    """Header plus per-message metadata, read without decompressing payloads."""

    header: EntryHeader
    producer_name: str
    messages: tuple[MessageMeta, ...]
    encryption: EntryEncryption | None = None


@dataclass(frozen=True)
class DecodedEntry:
    """A fully decoded entry; ``messages[i]`` has batch index ``i`` when ``header.batched``."""

    header: EntryHeader
    producer_name: str
    messages: tuple[EntryMessage, ...]
    encryption: EntryEncryption | None = None
    """Set for an encrypted entry (decoded with a ``decrypt`` function)."""
