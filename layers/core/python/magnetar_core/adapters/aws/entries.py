"""S3 adapter for entry objects: immutable, under unique keys, never overwritten (a committed
upload is copied to a key of its own with a conditional PUT: ``put_new``)."""

from __future__ import annotations

from botocore.exceptions import ClientError

from magnetar_core.adapters.aws.clients import BotoClient, error_code, translated
from magnetar_core.domain.errors import ConditionFailed

# S3's answers to a conditional PUT whose key exists (412), or to one racing another
# conditional write of the key (409: the other one wins or fails on its own).
_EXISTS = {"PreconditionFailed", "ConditionalRequestConflict"}
_MISSING = {"NoSuchKey", "404"}


class EntryStore:
    """Puts and gets entry objects (whole, or a byte range of a segment)."""

    def __init__(self, s3: BotoClient, bucket: str) -> None:
        self._s3 = s3
        self._bucket = bucket

    def put(self, key: str, data: bytes) -> None:
        """Store an entry object; one S3 PUT."""
        with translated(f"storing entry object {key}"):
            self._s3.put_object(Bucket=self._bucket, Key=key, Body=data)

    def put_new(self, key: str, data: bytes) -> None:
        """Store an entry object unless ``key`` has one; one conditional S3 PUT
        (``If-None-Match: *``). Raises ConditionFailed when the key has an object."""
        with translated(f"storing new entry object {key}"):
            try:
                self._s3.put_object(Bucket=self._bucket, Key=key, Body=data, IfNoneMatch="*")
            except ClientError as exc:
                if error_code(exc) in _EXISTS:
                    raise ConditionFailed(f"entry object {key} exists") from exc
                raise

    def delete(self, key: str) -> None:
        """Delete an uncommitted entry object; one S3 DELETE (no error when missing)."""
        with translated(f"deleting entry object {key}"):
            self._s3.delete_object(Bucket=self._bucket, Key=key)

    def get(self, key: str, offset: int = 0, length: int | None = None) -> bytes:
        """Read an entry object, or ``length`` bytes at ``offset``; one S3 GET."""
        kwargs = {"Bucket": self._bucket, "Key": key}
        if offset or length is not None:
            end = "" if length is None else str(offset + length - 1)
            kwargs["Range"] = f"bytes={offset}-{end}"
        with translated(f"reading entry object {key}"):
            return self._s3.get_object(**kwargs)["Body"].read()

    def find(self, key: str, limit_bytes: int | None = None) -> bytes | None:
        """The whole object (at most its first ``limit_bytes`` bytes: a ranged GET), or None
        when ``key`` has none; one S3 GET."""
        kwargs = {"Bucket": self._bucket, "Key": key}
        if limit_bytes is not None:
            kwargs["Range"] = f"bytes=0-{max(0, limit_bytes - 1)}"
        with translated(f"reading entry object {key}"):
            try:
                return self._s3.get_object(**kwargs)["Body"].read()
            except ClientError as exc:
                if error_code(exc) in _MISSING:
                    return None
                if error_code(exc) == "InvalidRange":  # an empty object has no byte 0
                    return b""
                raise

    def upload_url(self, key: str, expires_s: int = 900) -> str:
        """A presigned PUT URL for ``key`` (no AWS request: signed locally)."""
        with translated(f"presigning an upload of {key}"):
            return self._s3.generate_presigned_url(
                "put_object", Params={"Bucket": self._bucket, "Key": key}, ExpiresIn=expires_s
            )

    def download_url(self, key: str, expires_s: int = 900) -> str:
        """A presigned GET URL for ``key`` (no AWS request: signed locally)."""
        with translated(f"presigning a download of {key}"):
            return self._s3.generate_presigned_url(
                "get_object", Params={"Bucket": self._bucket, "Key": key}, ExpiresIn=expires_s
            )
