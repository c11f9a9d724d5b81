"""Contract of the entry store: whole and ranged reads, missing objects, conditional puts of
new objects, and presigned URLs that a client can PUT to and GET from (on memory: served by
the in-process test service)."""

from __future__ import annotations

import pytest
import requests

from magnetar_core.domain.errors import ConditionFailed, StorageFault


@pytest.fixture
def key(uid) -> str:
    return f"persistent/c/ns/t-{uid}/1/{uid}-0"


@pytest.fixture
def http_entries(backend):
    """An entry store whose presigned URLs are served over HTTP."""
    if backend.name != "memory":
        yield backend.stores.entries
        return
    from magnetar_local.memory_service import MemoryService

    with MemoryService() as service:
        yield service.stores.entries


def test_an_object_reads_back_whole(stores, key):
    stores.entries.put(key, b"\x00entry bytes\xff")
    assert stores.entries.get(key) == b"\x00entry bytes\xff"


def test_a_range_reads_length_bytes_at_offset(stores, key):
    stores.entries.put(key, b"0123456789")
    assert stores.entries.get(key, 2, 3) == b"234"
    assert stores.entries.get(key, 7) == b"789"
    assert stores.entries.get(key, 0, 4) == b"0123"
    assert stores.entries.get(key, 8, 10) == b"89"  # a range past the end is cut short


def test_a_missing_object_is_a_storage_fault(stores, key):
    with pytest.raises(StorageFault):
        stores.entries.get(key)
    with pytest.raises(StorageFault):
        stores.entries.get(key, 1, 2)


def test_an_offset_past_the_end_is_a_storage_fault(stores, key):
    stores.entries.put(key, b"0123")
    with pytest.raises(StorageFault):
        stores.entries.get(key, 4, 2)


def test_a_put_again_replaces_the_object(stores, key):
    stores.entries.put(key, b"first")
    stores.entries.put(key, b"second")
    assert stores.entries.get(key) == b"second"


def test_put_new_stores_an_object_once_and_a_second_put_new_changes_nothing(stores, key):
    stores.entries.put_new(key, b"committed")
    with pytest.raises(ConditionFailed):
        stores.entries.put_new(key, b"again")
    with pytest.raises(ConditionFailed):
        stores.entries.put_new(key, b"committed")
    assert stores.entries.get(key) == b"committed"


def test_put_new_refuses_a_key_a_plain_put_wrote(stores, key):
    stores.entries.put(key, b"uploaded")
    with pytest.raises(ConditionFailed):
        stores.entries.put_new(key, b"other")
    assert stores.entries.get(key) == b"uploaded"


def test_find_reads_a_whole_object_or_none_when_the_key_has_none(stores, key):
    assert stores.entries.find(key) is None
    stores.entries.put(key, b"\x00found\xff")
    assert stores.entries.find(key) == b"\x00found\xff"
    assert stores.entries.find(key + "/../" + key.rsplit("/", 1)[1]) is None


def test_delete_removes_an_object_and_deleting_a_missing_one_is_no_error(stores, key):
    stores.entries.put(key, b"orphan")
    stores.entries.delete(key)
    assert stores.entries.find(key) is None
    stores.entries.delete(key)


def test_a_client_uploads_to_the_upload_url_and_downloads_from_the_download_url(http_entries, key):
    url = http_entries.upload_url(key, 60)
    assert requests.put(url, data=b"uploaded \x00 bytes", timeout=10).status_code == 200
    assert http_entries.get(key) == b"uploaded \x00 bytes"
    got = requests.get(http_entries.download_url(key, 60), timeout=10)
    assert got.status_code == 200 and got.content == b"uploaded \x00 bytes"


def test_a_put_to_the_upload_url_of_one_key_leaves_other_keys_alone(http_entries, key):
    http_entries.put_new(key + "-entry", b"committed")
    url = http_entries.upload_url(key, 60)
    assert requests.put(url, data=b"upload", timeout=10).status_code == 200
    assert requests.put(url, data=b"upload again", timeout=10).status_code == 200
    assert http_entries.get(key) == b"upload again"
    assert http_entries.get(key + "-entry") == b"committed"


def test_urls_of_different_keys_differ(stores, key):
    assert stores.entries.upload_url(key) != stores.entries.upload_url(key + "x")
    assert stores.entries.download_url(key) != stores.entries.download_url(key + "x")
