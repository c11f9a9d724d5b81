"""On the emulator (S3 presigned URLs, conditional PUTs): a committed large entry cannot
change, an upload commits once, and references that are no upload of the topic are a 400
(issue 11, defect 2)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "unit"))
from large_entry_http import (  # noqa: E402
    ORIGINAL,
    OTHER_LENGTH,
    SAME_LENGTH,
    LargeEntries,
    double_commit,
    entry_of,
    refs_refused,
    tamper_after_commit,
)

pytestmark = pytest.mark.emulator


@pytest.mark.parametrize("tampered", [SAME_LENGTH, OTHER_LENGTH], ids=["same", "other-length"])
def test_consumers_receive_the_committed_bytes_after_the_presigned_url_is_put_again(
    local_stack, tampered
):
    tamper_after_commit(local_stack.url, tampered)


def test_a_second_commit_of_one_upload_is_refused_and_stores_nothing(local_stack):
    status, body = double_commit(local_stack.url)
    assert (status, body["error"]) == (400, "InvalidMessage"), body
    assert "committed already" in body["message"]


def test_references_that_are_no_upload_of_the_topic_are_a_400_and_store_nothing(local_stack):
    for case, (status, body) in refs_refused(local_stack.url).items():
        word = "no uploaded object" if case == "missing upload" else "not an upload of"
        assert (status, body["error"]) == (400, "InvalidMessage"), (case, body)
        assert word in body["message"], (case, body)


def test_the_committed_entry_is_an_object_of_its_own_the_upload_url_cannot_reach(
    local_stack, aws_clients
):
    topic = LargeEntries(local_stack.url)
    upload = topic.uploaded(ORIGINAL)
    assert topic.commit(upload["entryRef"])[0] == 200
    bucket = local_stack.name("EntriesBucket")
    sealed_key = upload["entryRef"].replace("/uploads/", "/")
    prefix = sealed_key.rsplit("/", 1)[0] + "/"
    listed = aws_clients.s3.list_objects_v2(Bucket=bucket, Prefix=prefix)["Contents"]
    assert sorted(o["Key"] for o in listed) == sorted([upload["entryRef"], sealed_key])
    sealed = aws_clients.s3.get_object(Bucket=bucket, Key=sealed_key)
    assert sealed["Body"].read() == entry_of(ORIGINAL)
