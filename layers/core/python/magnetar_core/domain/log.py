"""The log index's records: one committed entry (IndexEntry), ledger keys, once markers,
per-message key hashes."""

from __future__ import annotations

from dataclasses import dataclass, replace

from magnetar_core.domain.keyshared import sticky_key_hash

NONE_KEY_HASH = sticky_key_hash(None, None)
"""The sticky key hash of a keyless message."""


def log_key(partition_topic: str, ledger_id: int) -> str:
    """The partition key of one ledger of one partition (``|`` never occurs in topic names)."""
    return f"{partition_topic}|{ledger_id}"


ONCE_SORT_KEY = "$once"
"""The sort key of a once marker (``once_marker_pk``) in the cursors table."""


def once_marker_pk(ledger_key: str, once_key: str) -> str:
    """Where the marker of an entry committed once per ``once_key`` lives (cursors table,
    beside the ledger's cursors and buffers, never under the ledger's own key)."""
    return f"{ledger_key}|once|{once_key}"


def encode_key_hashes(hashes: tuple[int, ...]) -> bytes:
    """The ``kh`` attribute: 2 bytes big-endian per message, or one hash when every message
    of the entry shares it (keyless entries, key-based batches)."""
    if len(set(hashes)) == 1:
        hashes = hashes[:1]
    return b"".join(h.to_bytes(2, "big") for h in hashes)


def decode_key_hashes(data: bytes, count: int) -> tuple[int, ...]:
    """Inverse of ``encode_key_hashes`` for an entry of ``count`` messages."""
    hashes = tuple(int.from_bytes(data[i : i + 2], "big") for i in range(0, len(data), 2))
    if len(hashes) == 1 and count > 1:
        return hashes * count
    return hashes


@dataclass(frozen=True)
class IndexEntry:
    """One committed entry: where its bytes are and what they hold. Times in epoch ms."""

    entry_id: int
    object_key: str
    offset: int
    length: int
    count: int
    batched: bool
    publish_min_ms: int
    publish_max_ms: int
    producer: str
    sequence_min: int
    sequence_max: int
    fence: bool = False
    epoch: int = 0
    exclusive: bool = False
    partial_chunk: bool = False
    key_hashes: tuple[int, ...] = ()
    deliver_at_ms: int = 0
    """The latest ``deliverAt`` of the entry's messages (0: none is delayed)."""
    data: bytes | None = None
    """An inline entry's bytes (attribute ``d``; ``object_key`` empty): small entries live in
    their index item, no S3 object (docs/architecture/producing.md, "Inline entries")."""
    allocated_ms: int = 0
    """When the entry's id was allocated (attribute ``at``, the writer's clock; 0: written
    before ids were allocated): how readers tell a dead writer's gap (``domain.sequencing``)."""
    hole: bool = False
    """A hole: an id whose writer died, settled by a reader (``domain.sequencing``); every
    read of the log port skips it."""

    @property
    def inline(self) -> bool:
        """True when the entry's bytes are in the item itself (``data``)."""
        return self.data is not None

    @property
    def marker(self) -> bool:
        """True for items that hold no messages: fences and access-epoch markers."""
        return self.count == 0

    def message_hashes(self) -> tuple[int, ...]:
        """One sticky key hash per message. Items committed before hashes were recorded
        count as keyless: every message has the hash of ``NONE_KEY``."""
        if len(self.key_hashes) == self.count:
            return self.key_hashes
        return (NONE_KEY_HASH,) * self.count

    def to_item(self, pk: str) -> dict:
        item = {
            "pk": {"S": pk},
            "eid": {"N": str(self.entry_id)},
            "obj": {"S": self.object_key},
            "off": {"N": str(self.offset)},
            "len": {"N": str(self.length)},
            "n": {"N": str(self.count)},
            "b": {"BOOL": self.batched},
            "pt0": {"N": str(self.publish_min_ms)},
            "pt1": {"N": str(self.publish_max_ms)},
            "pn": {"S": self.producer},
            "sq0": {"N": str(self.sequence_min)},
            "sq1": {"N": str(self.sequence_max)},
        }
        if self.fence:
            item["fence"] = {"BOOL": True}
        if self.epoch:
            item["ep"] = {"N": str(self.epoch)}
        if self.exclusive:
            item["ex"] = {"BOOL": True}
        if self.partial_chunk:
            item["pc"] = {"BOOL": True}
        if self.key_hashes:
            item["kh"] = {"B": encode_key_hashes(self.key_hashes)}
        if self.deliver_at_ms:
            item["da"] = {"N": str(self.deliver_at_ms)}
        if self.data is not None:
            item["d"] = {"B": self.data}
        if self.allocated_ms:
            item["at"] = {"N": str(self.allocated_ms)}
        if self.hole:
            item["hole"] = {"BOOL": True}
        return item

    @classmethod
    def from_item(cls, item: dict) -> IndexEntry:
        def num(name: str) -> int:
            return int(item[name]["N"]) if name in item else 0

        return cls(
            entry_id=num("eid"),
            object_key=item.get("obj", {}).get("S", ""),
            offset=num("off"),
            length=num("len"),
            count=num("n"),
            batched=item.get("b", {}).get("BOOL", False),
            publish_min_ms=num("pt0"),
            publish_max_ms=num("pt1"),
            producer=item.get("pn", {}).get("S", ""),
            sequence_min=num("sq0"),
            sequence_max=num("sq1"),
            fence=item.get("fence", {}).get("BOOL", False),
            epoch=num("ep"),
            exclusive=item.get("ex", {}).get("BOOL", False),
            partial_chunk=item.get("pc", {}).get("BOOL", False),
            key_hashes=decode_key_hashes(item["kh"]["B"], num("n")) if "kh" in item else (),
            deliver_at_ms=num("da"),
            data=bytes(item["d"]["B"]) if "d" in item else None,
            allocated_ms=num("at"),
            hole=item.get("hole", {}).get("BOOL", False),
        )

    def item_size_bytes(self, pk: str) -> int:
        """The size DynamoDB bills and limits for ``to_item(pk)``, in bytes (``item_size``)."""
        return item_size(self.to_item(pk))

    @classmethod
    def fence_at(cls, entry_id: int) -> IndexEntry:
        """A fence item: it holds no messages and closes the ledger at ``entry_id``."""
        return cls(entry_id, "", 0, 0, 0, False, 0, 0, "", 0, 0, fence=True)

    @classmethod
    def hole_at(cls, entry_id: int, now_ms: int) -> IndexEntry:
        """A hole: ``entry_id`` holds nothing (its writer died); written at ``now_ms``."""
        return cls(entry_id, "", 0, 0, 0, False, 0, 0, "", 0, 0, allocated_ms=now_ms, hole=True)

    @classmethod
    def epoch_marker(cls, entry_id: int, epoch: int, exclusive: bool, producer: str) -> IndexEntry:
        """A marker holding no messages: from here on, commits need ``epoch`` (and, while
        ``exclusive``, a registered producer)."""
        return cls(
            entry_id, "", 0, 0, 0, False, 0, 0, producer, 0, 0, epoch=epoch, exclusive=exclusive
        )


def _number_size(text: str) -> int:
    """DynamoDB's size of a number: about 1 byte per 2 significant digits, plus 1."""
    digits = text.lstrip("-").replace(".", "").strip("0") or "0"
    return (len(digits) + 1) // 2 + 1


def _value_size(value: dict) -> int:
    ((kind, v),) = value.items()
    if kind in ("S", "B"):
        return len(v.encode() if isinstance(v, str) else v)
    if kind == "N":
        return _number_size(v)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind in ("NS", "SS", "BS"):
        return sum(_value_size({kind[0]: x}) for x in v)
    if kind == "L":
        return 3 + sum(1 + _value_size(x) for x in v)
    return 3 + sum(len(k.encode()) + 1 + _value_size(x) for k, x in v.items())  # "M"


def item_size(item: dict) -> int:
    """The size of a DynamoDB item in its wire form (``{"name": {"S": ...}}``), in bytes, as
    DynamoDB counts it for request units and its 400 KB limit: UTF-8 attribute names plus
    values (strings and binaries their length, numbers 1 byte per 2 digits + 1, booleans 1).
    An upper bound within a few bytes; raises ValueError for a value of no known type."""
    try:
        return sum(len(name.encode()) + _value_size(value) for name, value in item.items())
    except (ValueError, AttributeError) as exc:
        raise ValueError(f"not a DynamoDB item value: {exc}") from exc


def fits_inline(index: IndexEntry, pk: str, data_bytes: int, max_item_bytes: int) -> bool:
    """Whether ``index`` (committed under ``pk``) may carry an entry of ``data_bytes`` bytes
    inline: the item with attribute ``d`` stays within ``max_item_bytes`` (0: never). The
    entry id, access epoch and allocation time are counted at their widest (19 digits), so
    the commit, which sets them, can never grow the item past the limit."""
    if max_item_bytes <= 0:
        return False
    widest = replace(
        index,
        entry_id=2**63 - 1,
        epoch=2**63 - 1,
        exclusive=True,
        data=b"",
        allocated_ms=2**63 - 1,
    )
    return widest.item_size_bytes(pk) + data_bytes <= max_item_bytes
