"""What the fuzz lane (tests/fuzz) found, each as the exact request that showed it (issue 11):
the answer now, and that the rejected request changed nothing."""

from __future__ import annotations

import re

import pytest
from edge_http import TOPIC, assert_error, call
from openapi_support import load_openapi

from magnetar_core.domain.errors import TopicNotFound


@pytest.mark.parametrize("body", [None, b"null"])
def test_creating_a_partitioned_topic_without_a_partition_count_is_a_400_that_creates_nothing(
    svc, body
):
    # found: PUT .../partitions with no body answered 204 and created a non-partitioned topic
    answer = call(f"{svc.url}/admin/v2{TOPIC}/partitions", "PUT", body)
    assert_error(answer, 400, "InvalidMessage", "partition count")
    with pytest.raises(TopicNotFound):
        svc.engine.admin.partitions(_name())


def _name():
    from magnetar_local.memory_service import topic_name

    return topic_name(TOPIC.lstrip("/"))


def test_a_method_no_route_has_is_a_405_in_the_error_shape_not_a_501_page(svc):
    # found: TRACE (the fuzzer's "unexpected method") got the standard library's 501 HTML
    answer = call(f"{svc.url}/v1{TOPIC}/messages", "TRACE")
    assert_error(answer, 405, "NotAllowed", "TRACE")


def test_the_documented_topic_pattern_allows_more_than_512_bytes_only_for_a_partition_name():
    # found: openapi.yaml allowed any 542-character name; the service takes 512 bytes plus a
    # partition suffix, whose index is 0..2147483647 without a leading zero
    document = load_openapi()
    topic = document["components"]["parameters"]["topic"]["schema"]
    matches = re.compile(topic["pattern"]).fullmatch
    assert matches("t" * 512) and matches("t" * 512 + "-partition-2147483647")
    assert not matches("t" * 513)
    assert not matches("t" * 512 + "-partition-01")
    assert not matches("t" * 512 + "-partition-21474836470")
    assert topic["maxLength"] == len("t" * 512 + "-partition-2147483647")
