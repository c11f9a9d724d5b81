"""Large entries: uploaded through a presigned URL, committed once, immutable afterwards.

An entry above 1 MiB cannot travel through API Gateway and Lambda, so the SDK PUTs it to S3
through a presigned URL (``POST .../uploads``) and produces ``{"entryRef": <upload key>}``.
A presigned URL stays valid for its whole expiry, commit or not, so the log never references
the uploaded object: at commit the service reads the upload (one S3 GET; it validates what it
commits) and stores exactly those bytes under the entry's own key with a conditional PUT
(``If-None-Match: *``). No URL is ever signed for that key, so a committed entry cannot
change. The entry key is derived from the upload key, so the same conditional PUT consumes
the upload: a second commit of one upload finds the key taken and is refused. The upload
itself is left as an orphan for the expire job (``--orphan-age-ms``, 1 h: after its URL
expired).

Keys (``<id>``: letters, digits, ``-``, ``_``; nothing that could traverse)::

    upload  entries/<domain>/<tenant>/<namespace>/<topic>/uploads/<id>
    entry   entries/<domain>/<tenant>/<namespace>/<topic>/<id>
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from magnetar_core.domain.errors import ConditionFailed, InvalidMessage, MessageTooBig
from magnetar_core.domain.runtime import Runtime
from magnetar_core.ports import EntryStore
from magnetar_wire.names import TopicName

UPLOADS_DIR = "uploads/"
_UPLOAD_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")
_SHOWN = 200  # characters of a refused entryRef quoted in the error


def object_prefix(topic: TopicName) -> str:
    """Where a topic's entry objects live in the bucket."""
    return f"entries/{topic.domain}/{topic.tenant}/{topic.namespace}/{topic.local}/"


def upload_prefix(topic: TopicName) -> str:
    """Where a topic's uploads live: the only keys presigned PUT URLs are made for."""
    return object_prefix(topic) + UPLOADS_DIR


def entry_key_of(topic: TopicName, entry_ref: str) -> str:
    """The committed entry's key for ``entry_ref``, an upload of ``topic``.

    Raises InvalidMessage unless ``entry_ref`` is ``upload_prefix(topic)`` plus an upload id
    (so another topic's upload, a traversal such as ``B/../A/...`` or ``%2e%2e``, or any other
    key is refused before S3 is asked).
    """
    prefix = upload_prefix(topic)
    upload_id = entry_ref[len(prefix) :] if entry_ref.startswith(prefix) else ""
    if not _UPLOAD_ID.fullmatch(upload_id):
        raise InvalidMessage(
            f"entryRef {entry_ref[:_SHOWN]!r} is not an upload of topic {topic}: expected "
            f"'{prefix}<id>' as POST .../uploads returned it"
        )
    return object_prefix(topic) + upload_id


@dataclass(frozen=True)
class Upload:
    """Where a client PUTs a large entry (``url``, valid ``expires_s`` seconds) and the
    reference it then produces with."""

    entry_ref: str
    url: str
    expires_s: int


class Uploads:
    """Starts uploads, reads them back for validation and seals them into entries."""

    def __init__(self, entries: EntryStore, runtime: Runtime) -> None:
        self._entries = entries
        self._rt = runtime

    def start(self, topic: TopicName, expires_s: int) -> Upload:
        """A new upload key of ``topic`` and its presigned PUT URL (no AWS request)."""
        key = upload_prefix(topic) + self._rt.new_id()
        return Upload(key, self._entries.upload_url(key, expires_s), expires_s)

    def read(self, topic: TopicName, entry_ref: str, max_bytes: int) -> bytes:
        """The uploaded bytes of ``entry_ref`` (one ranged S3 GET of at most ``max_bytes`` +
        1 bytes: a presigned PUT takes up to 5 GB, which must not reach the handler's
        memory). Raises InvalidMessage for a reference that is not an upload of ``topic`` or
        names no object, MessageTooBig for an upload above ``max_bytes``."""
        entry_key_of(topic, entry_ref)
        data = self._entries.find(entry_ref, max_bytes + 1)
        if data is None:
            raise InvalidMessage(
                f"entryRef {entry_ref!r} names no uploaded object: PUT the entry to its "
                "uploadUrl (before it expires) and produce with the entryRef afterwards"
            )
        if len(data) > max_bytes:
            raise MessageTooBig(
                f"The uploaded entry exceeds the maximum message size of {max_bytes} bytes; "
                "enable chunking or send less"
            )
        return data

    def seal(self, topic: TopicName, entry_ref: str, data: bytes) -> str:
        """Store ``data`` (the bytes ``read`` returned and the caller validated) under the
        entry key of ``entry_ref``, once (one conditional S3 PUT); returns that key.
        Raises InvalidMessage when the upload was committed already."""
        key = entry_key_of(topic, entry_ref)
        try:
            self._entries.put_new(key, data)
        except ConditionFailed:
            raise InvalidMessage(
                f"entryRef {entry_ref!r} was committed already: an upload commits once "
                "(POST .../uploads for another)"
            ) from None
        return key
