"""What the fuzz lane (tests/fuzz) found, each as the exact request that showed it (issue 11):
the answer now, and that the rejected request changed nothing."""

from __future__ import annotations

import pytest
from edge_http import TOPIC, assert_error, call

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


def test_a_method_no_route_has_is_a_404_in_the_error_shape_not_a_501_page(svc):
    # found: TRACE (the fuzzer's "unexpected method") got the standard library's 501 HTML
    answer = call(f"{svc.url}/v1{TOPIC}/messages", "TRACE")
    assert_error(answer, 404, "NotFound", "TRACE")
