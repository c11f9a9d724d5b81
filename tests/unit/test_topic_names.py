"""TopicName: full and short names, validation messages, partitions."""

import pytest

from magnetar_core.domain.errors import InvalidTopicName
from magnetar_wire.names import TopicName


def test_a_full_persistent_name_parses_into_its_parts_and_prints_back():
    name = TopicName.parse("persistent://acme/orders-ns/orders.v1")
    assert (name.domain, name.tenant, name.namespace, name.local) == (
        "persistent",
        "acme",
        "orders-ns",
        "orders.v1",
    )
    assert str(name) == "persistent://acme/orders-ns/orders.v1"
    assert name.namespace_name == "persistent://acme/orders-ns"
    assert name.persistent is True


def test_a_non_persistent_name_is_not_persistent():
    name = TopicName.parse("non-persistent://t/n/x_y=z:1")
    assert name.domain == "non-persistent"
    assert name.local == "x_y=z:1"
    assert name.persistent is False


def test_a_short_name_lives_in_public_default_and_equals_its_full_form():
    short = TopicName.parse("orders")
    assert str(short) == "persistent://public/default/orders"
    assert short == TopicName.parse("persistent://public/default/orders")


def test_of_builds_the_same_name_as_parse():
    assert TopicName.of("persistent", "a", "b", "c") == TopicName.parse("persistent://a/b/c")


def test_an_empty_or_non_string_name_is_invalid_and_says_it_is_empty():
    for bad in ("", None):
        with pytest.raises(InvalidTopicName, match="^Invalid topic name: it is empty$"):
            TopicName.parse(bad)


def test_an_unknown_domain_is_invalid_and_names_the_allowed_domains():
    with pytest.raises(InvalidTopicName) as caught:
        TopicName.parse("kafka://a/b/c")
    assert caught.value.message == (
        "Invalid topic name 'kafka://a/b/c': the domain must be persistent or non-persistent"
    )
    assert (caught.value.code, caught.value.status) == ("InvalidTopicName", 400)
    with pytest.raises(InvalidTopicName, match="domain must be persistent or non-persistent"):
        TopicName.of("kafka", "a", "b", "c")


@pytest.mark.parametrize(
    "text", ["persistent://a/b", "persistent://a/b/c/d", "persistent://a/b/c/", "persistent://"]
)
def test_a_full_name_without_exactly_three_segments_is_invalid_and_shows_the_shape(text):
    with pytest.raises(InvalidTopicName) as caught:
        TopicName.parse(text)
    assert caught.value.message == (
        f"Invalid topic name '{text}': expected persistent://tenant/namespace/topic"
    )


def test_a_short_name_containing_a_slash_is_invalid_and_suggests_the_full_form():
    with pytest.raises(InvalidTopicName, match="a short name has no '/'; give persistent://"):
        TopicName.parse("ns/topic")


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("persistent://a/b/my topic", "topic", "my topic"),
        ("persistent://a/b/t|1", "topic", "t|1"),
        ("persistent://te$nant/b/t", "tenant", "te$nant"),
        ("persistent://a/n#s/t", "namespace", "n#s"),
        ("persistent:///b/t", "tenant", ""),
        ("persistent://a//t", "namespace", ""),
        ("persistent://a/b/", "topic", ""),
        ("ordérs", "topic", "ordérs"),
    ],
)
def test_a_segment_with_bad_characters_or_empty_is_invalid_and_names_the_segment(text, kind, value):
    with pytest.raises(InvalidTopicName) as caught:
        TopicName.parse(text)
    full = text if "://" in text else f"persistent://public/default/{text}"
    assert caught.value.message == (
        f"Invalid topic name '{full}': the {kind} '{value}' may only hold letters, digits "
        "and - _ = : . (use persistent://tenant/namespace/topic or a short name)"
    )


@pytest.mark.parametrize("text", ["persistent://public/default/orders\n", "orders\n"])
def test_a_name_with_a_trailing_newline_is_invalid(text):
    with pytest.raises(InvalidTopicName):
        TopicName.parse(text)


def test_partition_index_reads_the_partition_suffix_or_minus_one():
    assert TopicName.parse("orders-partition-3").partition_index == 3
    assert TopicName.parse("orders-partition-0").partition_index == 0
    assert TopicName.parse("orders-partition-12").partition_index == 12
    assert TopicName.parse("orders").partition_index == -1
    assert TopicName.parse("orders-partition-").partition_index == -1
    assert TopicName.parse("orders-partition-x").partition_index == -1


@pytest.mark.parametrize(
    "local", ["orders-partition-03", "orders-partition--1", "x-partition-2147483648"]
)
def test_a_partition_suffix_that_is_no_partition_index_is_an_invalid_topic_name(local):
    with pytest.raises(InvalidTopicName, match="not a partition index"):
        TopicName.parse(local)


def test_base_strips_the_partition_suffix_and_is_itself_otherwise():
    part = TopicName.parse("persistent://a/b/orders-partition-7")
    assert part.base == TopicName.parse("persistent://a/b/orders")
    plain = TopicName.parse("persistent://a/b/orders")
    assert plain.base is plain


def test_partition_names_a_partition_whose_base_is_the_topic():
    topic = TopicName.parse("non-persistent://a/b/orders")
    part = topic.partition(4)
    assert str(part) == "non-persistent://a/b/orders-partition-4"
    assert part.partition_index == 4
    assert part.base == topic
    assert [str(topic.partition(i)) for i in range(2)] == [
        "non-persistent://a/b/orders-partition-0",
        "non-persistent://a/b/orders-partition-1",
    ]


def test_names_sort_by_domain_tenant_namespace_then_topic():
    names = [TopicName.parse(t) for t in ("persistent://b/a/a", "persistent://a/b/a", "z")]
    assert [str(n) for n in sorted(names)] == [
        "persistent://a/b/a",
        "persistent://b/a/a",
        "persistent://public/default/z",
    ]


def test_the_sdk_and_the_engine_share_one_topic_name_and_one_invalid_topic_name():
    import magnetar._topics
    import magnetar_wire.names
    from magnetar_core.domain import errors

    assert TopicName is magnetar_wire.names.TopicName is magnetar._topics.TopicName
    assert InvalidTopicName is magnetar_wire.names.InvalidTopicName
    assert issubclass(InvalidTopicName, errors.MagnetarError)


def test_the_sdk_raises_its_own_invalid_topic_name_with_the_engines_message():
    import magnetar as pulsar
    from magnetar._topics import parse_topic

    with pytest.raises(pulsar.InvalidTopicName) as caught:
        parse_topic("persistent://a/b/t|1")
    assert not isinstance(caught.value, InvalidTopicName)
    assert str(caught.value) == (
        "Invalid topic name 'persistent://a/b/t|1': the topic 't|1' may only hold letters, "
        "digits and - _ = : . (use persistent://tenant/namespace/topic or a short name)"
    )


def test_the_sdk_also_accepts_tenant_namespace_topic_as_a_persistent_name():
    from magnetar._topics import parse_topic

    assert parse_topic("acme/orders/t") == TopicName.parse("persistent://acme/orders/t")
    with pytest.raises(InvalidTopicName):
        TopicName.parse("acme/orders/t")  # the service keeps asking for the full form


def test_a_regex_pattern_keeps_its_regex_as_the_local_name_and_checks_the_namespace():
    import magnetar as pulsar
    from magnetar._topics import parse_pattern

    assert (
        str(parse_pattern("persistent://acme/ns/finance-.*")) == "persistent://acme/ns/finance-.*"
    )
    assert str(parse_pattern("acme/ns/f.*")) == "persistent://acme/ns/f.*"
    assert str(parse_pattern("f.*")) == "persistent://public/default/f.*"
    for bad in ("persistent://ac me/ns/.*", "persistent://acme/ns/", "ns/.*", "acme/ns/a b"):
        with pytest.raises(pulsar.InvalidTopicName):
            parse_pattern(bad)


def test_path_gives_the_http_api_segments_percent_encoded():
    assert TopicName.parse("persistent://a/b/x:y=1").path() == "persistent/a/b/x%3Ay%3D1"
