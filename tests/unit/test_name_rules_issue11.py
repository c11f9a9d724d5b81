"""Names Pulsar refuses, refused by Magnetar too (issue 11, defect 8).

The topic-name rules live in magnetar_wire.names (TopicName, check_namespace), shared with the SDK;
these tests keep them refused.
"""

from __future__ import annotations

import pytest
from edge_http import assert_error, call

PRODUCE = b'{"messages": [{"payload": "YWJj"}]}'


@pytest.mark.parametrize("local", [".", ".."])
def test_a_topic_named_dot_or_dot_dot_is_an_invalid_topic_name(local):
    from magnetar_core.domain.errors import InvalidTopicName
    from magnetar_wire.names import TopicName

    with pytest.raises(InvalidTopicName):
        TopicName.of("persistent", "public", "default", local)


@pytest.mark.parametrize(("tenant", "namespace"), [("..", "default"), ("public", "..")])
def test_a_tenant_or_namespace_named_dot_dot_is_an_invalid_topic_name(tenant, namespace):
    from magnetar_core.domain.errors import InvalidTopicName
    from magnetar_wire.names import TopicName

    with pytest.raises(InvalidTopicName):
        TopicName.of("persistent", tenant, namespace, "t")


@pytest.mark.parametrize("local", ["x-partition--1", "x-partition-99999999999999999999"])
def test_a_partition_suffix_that_is_not_a_partition_index_is_refused(svc, local):
    path = f"/v1/persistent/public/default/{local}/messages"
    assert_error(call(svc.url + path, body=PRODUCE), 400, "InvalidTopicName")


@pytest.mark.parametrize("tenant", ["..", "%252F", "t%C3%A9nant"])
def test_namespace_policy_routes_refuse_tenants_pulsar_refuses(svc, tenant):
    path = f"/admin/v2/namespaces/{tenant}/default/deduplication"
    assert_error(call(svc.url + path, body=b"true"), 400, "InvalidTopicName")
    status, _, _ = call(svc.url + path, "GET")
    assert status in (400, 404)
