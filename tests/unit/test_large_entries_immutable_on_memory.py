"""A committed large entry cannot change, an upload commits once, and references that are
no upload of the topic are a 400 (issue 11, defect 2), on the in-memory service."""

from __future__ import annotations

import pytest
from edge_http import assert_error
from large_entry_http import (
    OTHER_LENGTH,
    SAME_LENGTH,
    double_commit,
    refs_refused,
    tamper_after_commit,
)


@pytest.mark.parametrize("tampered", [SAME_LENGTH, OTHER_LENGTH], ids=["same", "other-length"])
def test_consumers_receive_the_committed_bytes_after_the_upload_is_put_again(svc, tampered):
    tamper_after_commit(svc.url, tampered)


def test_a_second_commit_of_one_upload_is_refused_and_stores_nothing(svc):
    status, body = double_commit(svc.url)
    assert_error((status, body, None), 400, "InvalidMessage", "committed already")


def test_references_that_are_no_upload_of_the_topic_are_a_400_and_store_nothing(svc):
    answers = refs_refused(svc.url)
    for case, (status, body) in answers.items():
        word = "no uploaded object" if case == "missing upload" else "not an upload of"
        assert (status, body["error"]) == (400, "InvalidMessage"), (case, body)
        assert word in body["message"], (case, body)
