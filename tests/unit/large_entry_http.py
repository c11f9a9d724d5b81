"""The large-entry path by plain HTTP, as the SDK takes it (``POST .../uploads``, a PUT to the
presigned URL, produce ``{"entryRef": ...}``) and as a tamperer would (PUT again); shared by
the in-memory tests and the emulator tests of issue 11, defect 2."""

from __future__ import annotations

import base64
import json
import uuid

import requests
from edge_http import call

from magnetar_wire import EntryMessage, encode_entry


def entry_of(payload: bytes) -> bytes:
    """An entry (entry format) of one message holding ``payload``."""
    message = EntryMessage(payload=payload, sequence_id=0, publish_time_ms=1_700_000_000_000)
    return encode_entry([message], producer_name="large-entry-test", batched=False)


class LargeEntries:
    """One topic of a running service (``base_url``: the gateway)."""

    def __init__(self, base_url: str, name: str | None = None) -> None:
        self.name = name or f"large-{uuid.uuid4().hex[:10]}"
        self.base_url = base_url
        self.v1 = f"{base_url}/v1/persistent/public/default/{self.name}"

    def upload(self) -> dict:
        """The uploads route's answer (``uploadUrl``, ``entryRef``, ``expiresInSeconds``)."""
        status, body, _ = call(self.v1 + "/uploads", body=b"{}")
        assert status == 200, body
        return body

    @staticmethod
    def put(url: str, data: bytes) -> None:
        """PUT ``data`` to a presigned URL, as the SDK (or anyone holding the URL) does."""
        answer = requests.put(url, data=data, timeout=30)
        assert answer.status_code < 300, answer.text

    def commit(self, entry_ref: str):
        """(status, body, headers) of producing by reference."""
        return call(self.v1 + "/messages", body=json.dumps({"entryRef": entry_ref}).encode())

    def uploaded(self, payload: bytes) -> dict:
        """An upload holding an entry of ``payload``, not yet committed."""
        upload = self.upload()
        self.put(upload["uploadUrl"], entry_of(payload))
        return upload

    def payloads(self) -> list[bytes]:
        """Every payload a new subscription from Earliest receives (JSON receive)."""
        sub = f"s-{uuid.uuid4().hex[:8]}"
        status, handle, _ = call(
            f"{self.v1}/subscriptions/{sub}/consumers",
            body=b'{"initialPosition": "Earliest", "subscriptionType": "Shared"}',
        )
        assert status == 200, handle
        consumer = f"{self.v1}/subscriptions/{sub}/consumers/{handle['consumerId']}"
        status, received, _ = call(consumer + "/receive", body=b'{"waitMs": 300}')
        assert status == 200, received
        return [base64.b64decode(m["payload"]) for m in received["messages"]]

    def last_entry_id(self) -> int:
        """The topic's last entry id (-1: nothing committed)."""
        admin = f"{self.base_url}/admin/v2/persistent/public/default/{self.name}"
        status, body, _ = call(admin + "/lastMessageId", "GET")
        assert status == 200, body
        return body["entryId"]


# ---------------------------------------------------------------- scenarios (both backends)

ORIGINAL = b"TOPIC-A-PRIVATE-DATA"
SAME_LENGTH = b"TOPIC-A-TAMPER-DATA!"
OTHER_LENGTH = b"TOPIC-A-TAMPERED-WITH-A-LONGER-PAYLOAD"


def tamper_after_commit(base_url: str, tampered: bytes) -> None:
    """Commit an upload, PUT other bytes to the same presigned URL (still valid), and
    check that consumers receive the original bytes, before and after."""
    topic = LargeEntries(base_url)
    upload = topic.uploaded(ORIGINAL)
    status, body, _ = topic.commit(upload["entryRef"])
    assert status == 200, body
    assert topic.payloads() == [ORIGINAL]
    topic.put(upload["uploadUrl"], entry_of(tampered))
    assert topic.payloads() == [ORIGINAL]
    assert topic.last_entry_id() == 0


def double_commit(base_url: str) -> tuple[int, dict]:
    """Commit one upload twice; returns the second answer after checking one entry holds."""
    topic = LargeEntries(base_url)
    upload = topic.uploaded(ORIGINAL)
    assert topic.commit(upload["entryRef"])[0] == 200
    status, body, _ = topic.commit(upload["entryRef"])
    assert topic.last_entry_id() == 0
    assert topic.payloads() == [ORIGINAL]
    return status, body


def refs_refused(base_url: str) -> dict[str, tuple[int, dict]]:
    """Commit references that are no upload of the topic: another topic's (committed or
    not), another tenant's, namespace's, domain's or partition's key of the same topic name,
    traversals out of the topic's prefix, a key that does not exist, a committed
    entry's key. Returns each answer by case after checking nothing was committed."""
    victim, topic = LargeEntries(base_url), LargeEntries(base_url)
    theirs = victim.uploaded(ORIGINAL)
    committed = victim.uploaded(ORIGINAL)
    assert victim.commit(committed["entryRef"])[0] == 200
    mine = topic.upload()["entryRef"]  # never PUT: no object
    prefix = mine[: mine.rindex("/") + 1]
    upload_id = theirs["entryRef"].rsplit("/", 1)[1]
    sealed = committed["entryRef"].replace("/uploads/", "/")
    cases = {
        "another topic's upload": theirs["entryRef"],
        "another topic's entry": sealed,
        "another tenant's upload": f"entries/persistent/other-tenant/default/{topic.name}/uploads/{upload_id}",
        "another namespace's upload": f"entries/persistent/public/other-ns/{topic.name}/uploads/{upload_id}",
        "the non-persistent twin's": f"entries/non-persistent/public/default/{topic.name}/uploads/{upload_id}",
        "a partition's upload": f"entries/persistent/public/default/{topic.name}-partition-0/uploads/{upload_id}",
        "traversal": f"{prefix}../../{victim.name}/uploads/{upload_id}",
        "encoded traversal": f"{prefix}%2e%2e%2F%2e%2e%2F{victim.name}%2Fuploads%2F{upload_id}",
        "dots in the id": f"{prefix}..",
        "missing upload": mine,
        "empty": "",
        "an entry key of the topic": prefix.replace("/uploads/", "/") + upload_id,
    }
    answers = {case: topic.commit(ref)[:2] for case, ref in cases.items()}
    assert topic.last_entry_id() == -1
    assert victim.payloads() == [ORIGINAL]
    return answers
