"""Grace-period deletion shared by every job: trash manifests, purged once due.

An object just replaced (by a segment) or just unreferenced (by expiry) may still be read by
a request that looked the index up a moment ago, so it is not deleted at once: its key goes
into a manifest object ``trash/<due_ms>-<job>-<id>.json`` (``due_ms`` zero-padded to 13
digits, so listing order is due order), and ``purge_due`` — run at the start of every job —
deletes the keys of manifests whose due time has passed, then the manifest. Deleting is
idempotent, so a purge that crashed half-way is simply repeated by the next one.

A manifest may name, per key, the log index item ``(pk, eid)`` that referenced it (``refs``).
Such a key is deleted only if that item no longer references it (gone, or switched to
another object): a job can then write the manifest *before* its index switch, and a crash
between the two never deletes an object the index still needs.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping

TRASH_PREFIX = "trash/"
_DELETE_BATCH = 1000  # S3 DeleteObjects limit


def manifest_key(due_ms: int, job: str, manifest_id: str) -> str:
    """``trash/<due_ms:013>-<job>-<id>.json``."""
    return f"{TRASH_PREFIX}{due_ms:013d}-{job}-{manifest_id}.json"


def due_of(key: str) -> int:
    """The due time (epoch ms) encoded in a manifest key; raises ValueError if malformed."""
    return int(key[len(TRASH_PREFIX) :].split("-", 1)[0])


def schedule_deletes(
    s3,
    bucket: str,
    keys: Iterable[str],
    due_ms: int,
    job: str,
    sizes: Mapping[str, int] | None = None,
    new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
    refs: Mapping[str, tuple[str, int]] | None = None,
) -> str:
    """Write a manifest listing ``keys`` to delete at ``due_ms`` (epoch ms); one S3 PUT.

    ``sizes`` (bytes by key, optional) lets ``purge_due`` count the bytes it frees without
    a HEAD per object. ``refs`` (optional): the index item ``(pk, eid)`` per key that must no
    longer reference it when the purge runs. Returns the manifest key, or ``""`` (nothing
    written) when ``keys`` is empty.
    """
    listed = sorted(set(keys))
    if not listed:
        return ""
    body = {"job": job, "due_ms": due_ms, "keys": listed}
    if sizes is not None:
        body["sizes"] = {k: int(sizes[k]) for k in listed if k in sizes}
    if refs is not None:
        body["refs"] = {k: [refs[k][0], int(refs[k][1])] for k in listed if k in refs}
    key = manifest_key(due_ms, job, new_id())
    s3.put_object(
        Bucket=bucket,
        Key=key,
        Body=json.dumps(body, separators=(",", ":")).encode(),
        ContentType="application/json",
    )
    return key


def is_manifest(key: str) -> bool:
    """Whether ``key`` is named like a manifest (other objects under trash/ are left alone)."""
    if not (key.startswith(TRASH_PREFIX) and key.endswith(".json")):
        return False
    try:
        due_of(key)
    except ValueError:
        return False
    return True


def manifests(s3, bucket: str) -> Iterator[str]:
    """Manifest keys in due order (paginated listing of ``trash/``)."""
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=TRASH_PREFIX):
        for obj in page.get("Contents", []):
            if is_manifest(obj["Key"]):
                yield obj["Key"]


def read_manifest(s3, bucket: str, key: str) -> dict:
    """A manifest's body: ``{"job", "due_ms", "keys": [...], "sizes"?: {key: bytes}}``."""
    return json.loads(s3.get_object(Bucket=bucket, Key=key)["Body"].read())


def trashed_keys(s3, bucket: str) -> set[str]:
    """Every key some pending manifest will delete (expiry must not count them as orphans)."""
    out: set[str] = set()
    for key in manifests(s3, bucket):
        out.update(read_manifest(s3, bucket, key)["keys"])
    return out


def still_referenced(dynamodb, log_table: str, refs: Mapping[str, list]) -> set[str]:
    """The keys whose index item ``refs[key] = [pk, eid]`` still names them (BatchGetItem,
    100 keys a request, unprocessed keys retried)."""
    wanted = {(pk, int(eid)): key for key, (pk, eid) in refs.items()}
    pairs = sorted(wanted)
    out: set[str] = set()
    for i in range(0, len(pairs), 100):
        keys = [{"pk": {"S": pk}, "eid": {"N": str(eid)}} for pk, eid in pairs[i : i + 100]]
        request: dict[str, object] | None = {
            log_table: {
                "Keys": keys,
                "ConsistentRead": True,
                "ProjectionExpression": "pk, eid, obj",
            }
        }
        while request:
            page = dynamodb.batch_get_item(RequestItems=request)
            for item in page["Responses"].get(log_table, []):
                key = wanted[(item["pk"]["S"], int(item["eid"]["N"]))]
                if item.get("obj", {}).get("S") == key:
                    out.add(key)
            request = page.get("UnprocessedKeys") or None
    return out


def purge_due(
    s3, bucket: str, now_ms: int, dynamodb=None, log_table: str | None = None
) -> tuple[int, int]:
    """Delete the objects of every manifest due at or before ``now_ms``, then the manifest.

    Keys with ``refs`` are checked against the log table first (``dynamodb``, ``log_table``)
    and kept while their index item still references them; without a DynamoDB client such
    a manifest is left for a later purge. Returns ``(objects, bytes)`` deleted (bytes as
    recorded in the manifests). Idempotent: keys already gone are no error, and a manifest is
    removed only after its keys.
    """
    objects = freed = 0
    done: set[str] = set()  # a key listed by several manifests is counted once
    for key in manifests(s3, bucket):
        if due_of(key) > now_ms:
            break  # listing order is due order
        body = read_manifest(s3, bucket, key)
        listed = body["keys"]
        if body.get("refs"):
            if dynamodb is None or not log_table:
                continue
            kept = still_referenced(dynamodb, log_table, body["refs"])
            listed = [k for k in listed if k not in kept]
        for i in range(0, len(listed), _DELETE_BATCH):
            chunk = listed[i : i + _DELETE_BATCH]
            result = s3.delete_objects(
                Bucket=bucket,
                Delete={"Objects": [{"Key": k} for k in chunk], "Quiet": True},
            )
            errors = result.get("Errors", [])
            if errors:
                first = errors[0]
                raise RuntimeError(
                    f"deleting {len(errors)} objects of {key} failed: "
                    f"{first.get('Key')}: {first.get('Code')} {first.get('Message')}"
                )
        sizes = body.get("sizes", {})
        fresh = [k for k in listed if k not in done]
        done.update(fresh)
        objects += len(fresh)
        freed += sum(int(sizes.get(k, 0)) for k in fresh)
        s3.delete_object(Bucket=bucket, Key=key)
    return objects, freed
