"""moto's state in a data directory (``magnetar_local.durable``): the backends' tables and
buckets pickled into a snapshot and put back from one, and the directory's format marker
(snapshots pickle moto's objects: only the moto version that wrote them reads them)."""

from __future__ import annotations

import contextlib
import copyreg
import gc
import io
import json
import os
import pickle
from typing import Any

from magnetar_local.journal import DataDir

STATE = {"dynamodb": "tables", "s3": "buckets"}
"""service -> the backend attribute a snapshot holds."""


@contextlib.contextmanager
def no_gc() -> Any:
    """The cyclic collector off: loading or pickling the state creates or visits millions of
    objects and none of them is garbage (measured: a 100,000-item snapshot loads in a third
    of the time). ``Recorder.restore`` then moves the loaded state out of its way (gc.freeze)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _limited_size_dict(items: dict[str, Any]) -> Any:
    """A DynamoDB item's attributes as loaded from a snapshot: filled without moto's size
    check, which is quadratic in the attributes (it was most of a snapshot's load time);
    the item passed the check when it was written."""
    from moto.dynamodb.models.dynamo_type import LimitedSizeDict

    attrs = LimitedSizeDict.__new__(LimitedSizeDict)
    dict.update(attrs, items)
    return attrs


def dumps_state(state: Any) -> bytes:
    """``state`` pickled, DynamoDB items' attributes as plain dicts (``_limited_size_dict``)."""
    from moto.dynamodb.models.dynamo_type import LimitedSizeDict

    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = copyreg.dispatch_table.copy()
    pickler.dispatch_table[LimitedSizeDict] = lambda attrs: (_limited_size_dict, (dict(attrs),))
    pickler.dump(state)
    return out.getvalue()


def backend(service: str, account: str, region: str) -> Any:
    from moto.backends import get_backend

    return get_backend(service)[account][region]  # type: ignore[call-overload]


def pickled_state() -> bytes:
    """The backends' tables and buckets, pickled (call under the write lock)."""
    from moto.backends import get_backend

    held = {}
    for service, attribute in STATE.items():
        for account, regions in get_backend(service).items():  # type: ignore[call-overload]
            for region, found in regions.items():
                held[(service, account, region)] = getattr(found, attribute)
    return dumps_state(held)


def load_state(state: bytes) -> None:
    """Put a snapshot's tables and buckets back into the backends (call under the write
    lock, with the collector off: ``no_gc``)."""
    for (service, account, region), value in pickle.loads(state).items():
        setattr(backend(service, account, region), STATE[service], value)


def write_snapshot_and_exit(data: DataDir, segment: int) -> None:  # pragma: no cover - forked
    """In the forked copy: write the snapshot, exit (0 when written). The copy has only
    this thread; a lock another thread held at the fork stays held, so an S3 object's value
    is read without its lock, and nothing is logged."""
    from moto.s3.models import FakeKey

    def unlocked(key: Any) -> bytes:
        key._value_buffer.seek(0)
        return bytes(key._value_buffer.read())

    code = 1
    try:
        gc.disable()
        FakeKey.value = property(unlocked)  # type: ignore[assignment,method-assign]
        data.write_snapshot(segment, pickled_state())
        code = 0
    finally:
        os._exit(code)


FORMAT = 1
"""The data directory's format: records are calls of moto's backend methods and snapshots
pickle moto's objects, so a directory is read only by the moto version that wrote it."""


class IncompatibleDataDir(RuntimeError):
    """The data directory was written by another moto version or format."""


def check_format(data: DataDir) -> None:
    """Accept ``data`` if it was written by this format and moto version (marking a new one
    so); raises IncompatibleDataDir naming both otherwise."""
    import moto

    wanted = {"format": FORMAT, "moto": moto.__version__}
    marker = data.path / "format.json"
    if not marker.exists():
        marker.write_text(json.dumps(wanted) + "\n")
        return
    found = json.loads(marker.read_text())
    if found != wanted:
        raise IncompatibleDataDir(
            f"{data.path} holds state written by moto {found.get('moto')} (format "
            f"{found.get('format')}); this is moto {wanted['moto']} (format {FORMAT}): run the "
            "version that wrote it, or move the directory away to start afresh"
        )
