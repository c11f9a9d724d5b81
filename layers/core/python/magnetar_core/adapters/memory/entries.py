"""In-memory entry objects (the S3 bucket of ``adapters.aws.entries``): immutable bytes under
unique keys. Presigned URLs are ``<base_url>/<quoted key>``: whoever serves ``base_url``
(the in-process test service does) answers PUT with ``put`` and GET with ``get``."""

from __future__ import annotations

import threading
from urllib.parse import quote, unquote

from magnetar_core.domain.errors import ConditionFailed, StorageFault

DEFAULT_BASE_URL = "memory://entries"


class EntryStore:
    """Puts and gets entry objects (whole, or a byte range of a segment)."""

    def __init__(self, base_url: str = DEFAULT_BASE_URL) -> None:
        self.base_url = base_url.rstrip("/")
        self._objects: dict[str, bytes] = {}
        self._lock = threading.Lock()

    def put(self, key: str, data: bytes) -> None:
        """Store an entry object (a later put of the same key replaces it, as S3 does)."""
        with self._lock:
            self._objects[key] = bytes(data)

    def put_new(self, key: str, data: bytes) -> None:
        """Store an entry object unless ``key`` has one; raises ConditionFailed when it has
        (S3's ``If-None-Match: *``)."""
        with self._lock:
            if key in self._objects:
                raise ConditionFailed(f"entry object {key} exists")
            self._objects[key] = bytes(data)

    def delete(self, key: str) -> None:
        """Delete an uncommitted entry object (nothing when ``key`` has none)."""
        with self._lock:
            self._objects.pop(key, None)

    def get(self, key: str, offset: int = 0, length: int | None = None) -> bytes:
        """Read an entry object, or ``length`` bytes at ``offset``. Raises StorageFault for
        a missing key (S3's NoSuchKey) or an offset at or past the end (InvalidRange)."""
        with self._lock:
            data = self._objects.get(key)
        if data is None:
            raise StorageFault(f"reading entry object {key} failed: NoSuchKey")
        if not offset and length is None:
            return data
        if offset >= len(data):
            raise StorageFault(f"reading entry object {key} failed: InvalidRange")
        return data[offset:] if length is None else data[offset : offset + length]

    def find(self, key: str, limit_bytes: int | None = None) -> bytes | None:
        """The whole object (at most its first ``limit_bytes`` bytes), or None when ``key``
        has none."""
        with self._lock:
            data = self._objects.get(key)
        return data if data is None or limit_bytes is None else data[:limit_bytes]

    def upload_url(self, key: str, expires_s: int = 900) -> str:
        """The URL a client PUTs ``key``'s bytes to (served by the owner of ``base_url``)."""
        return self.url_of(key)

    def download_url(self, key: str, expires_s: int = 900) -> str:
        """The URL a client GETs ``key``'s bytes from (served by the owner of ``base_url``)."""
        return self.url_of(key)

    def url_of(self, key: str) -> str:
        return f"{self.base_url}/{quote(key, safe='')}"

    def key_of(self, path: str) -> str | None:
        """The object key a URL path (``/prefix/<quoted key>``) names, or None when the path
        is not under ``base_url``'s path."""
        prefix = "/" + self.base_url.split("://", 1)[-1].partition("/")[2]
        prefix = prefix.rstrip("/") + "/"
        if not path.startswith(prefix) or len(path) == len(prefix):
            return None
        return unquote(path[len(prefix) :])
