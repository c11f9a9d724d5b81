"""Compaction on an end-to-end encrypted topic, without a Spark session: the extract reads
an encrypted batch's keys (clear metadata) and the load copies the entry unchanged; a
batch is kept or dropped per message through its kept mask, never split or decrypted."""

from __future__ import annotations

import io
import pickle

from cryptography.hazmat.primitives.asymmetric import ec

from magnetar._encryption import cipher as _e2e
from magnetar_jobs.compact_topic_extract import entry_row
from magnetar_jobs.compact_topic_load import kept_entry_bytes
from magnetar_wire import EntryMessage, encode_entry

KEY = ec.generate_private_key(ec.SECP256R1())


class FakeS3:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def get_object(self, Bucket, Key, Range):  # noqa: N803 - boto3's names
        start, end = (int(x) for x in Range.removeprefix("bytes=").split("-"))
        return {"Body": io.BytesIO(self.data[start : end + 1])}


def _entry() -> bytes:
    batch = [EntryMessage(b"secret payload", i, 5, key=k) for i, k in enumerate(["a", "b", "a"])]
    encrypt = lambda s: _e2e.encrypt_section(s, {"k": (KEY.public_key(), {})})  # noqa: E731
    return encode_entry(batch, producer_name="p", encrypt=encrypt)


def _item(data: bytes, kept: list[int] | None = None) -> dict:
    item = {"eid": {"N": "3"}, "n": {"N": "3"}, "obj": {"S": "o"}, "off": {"N": "0"},
            "len": {"N": str(len(data))}}  # fmt: skip
    if kept is not None:
        item["kb"] = {"NS": [str(i) for i in kept]}
    return item


def test_the_extract_reads_the_keys_of_an_encrypted_batch_and_honours_its_kept_mask():
    data = _entry()
    _, _, _, _, _, messages = entry_row(FakeS3(data), "b", _item(data))
    assert [(m[0], m[1]) for m in messages] == [(0, "a"), (1, "b"), (2, "a")]
    _, _, _, _, _, kept = entry_row(FakeS3(data), "b", _item(data, kept=[1, 2]))
    assert [(m[0], m[1]) for m in kept] == [(1, "b"), (2, "a")]


def test_the_load_copies_an_encrypted_entry_byte_for_byte():
    data = _entry()
    row = {"item": pickle.dumps(_item(data)), "obj": "o", "off": 0, "len": len(data), "entry_id": 3}
    assert kept_entry_bytes(FakeS3(data), "b", row) == data
