"""An upload is read with a bound (max message size + 1 bytes): a 5 GB PUT to a presigned
URL never reaches the handler's memory, and an upload above the limit stores nothing."""

from __future__ import annotations

import pytest

from magnetar_core.adapters.memory.entries import EntryStore
from magnetar_core.domain.errors import InvalidMessage, MessageTooBig
from magnetar_core.domain.runtime import Runtime
from magnetar_core.services.uploads import Uploads
from magnetar_wire.names import TopicName

TOPIC = TopicName.parse("persistent://public/default/bounded")


def _uploaded(size: int) -> tuple[EntryStore, Uploads, str]:
    entries = EntryStore()
    uploads = Uploads(entries, Runtime())
    ref = uploads.start(TOPIC, 60).entry_ref
    entries.put(ref, b"x" * size)
    return entries, uploads, ref


def test_an_upload_of_exactly_the_maximum_is_read_whole():
    _, uploads, ref = _uploaded(1024)
    assert len(uploads.read(TOPIC, ref, 1024)) == 1024


def test_an_upload_one_byte_over_is_too_big_and_the_entry_key_stays_free():
    entries, uploads, ref = _uploaded(1025)
    with pytest.raises(MessageTooBig, match="1024 bytes"):
        uploads.read(TOPIC, ref, 1024)
    assert entries.find(ref.replace("/uploads/", "/")) is None


def test_the_bound_is_checked_after_the_reference_is_known_to_be_the_topics():
    _, uploads, ref = _uploaded(10)
    other = TopicName.parse("persistent://public/default/other")
    with pytest.raises(InvalidMessage, match="not an upload of"):
        uploads.read(other, ref, 1024)
