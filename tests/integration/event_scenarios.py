"""The scenarios of the sample events of events/: which files each replays, in order
(``SCENARIOS``: together every file, once, which test_events.py checks). They run in the
test_events_*.py files beside this one, through ``event_replay.Replay``."""

from __future__ import annotations

ADMIN_EVENTS = (
    "admin_health",
    "admin_create_topic",
    "admin_create_partitioned",
    "admin_get_partitions",
    "admin_list_topics",
    "admin_list_partitioned",
    "admin_partitioned_stats",
    "admin_delete_topic",
    "admin_delete_partitioned",
)
SHARED_EVENTS = (
    "subscribe_shared",
    "produce_json",
    "produce_entry",
    "produce_bad_topic",
    "receive",
    "ack",
    "ack_cumulative_on_shared",
    "nack",
    "redeliver",
    "admin_stats",
    "admin_last_message_id",
    "seek",
    "admin_subscriptions",
    "close_consumer",
    "admin_delete_subscription",
)
EXCLUSIVE_EVENTS = ("subscribe_exclusive", "consumer_heartbeat", "unsubscribe")
PRODUCER_EVENTS = (
    "producers_register_exclusive",
    "producers_heartbeat",
    "producers_release",
    "producers_register_shared",
    "produce_upload",
    "admin_set_topic_deduplication",
    "admin_get_topic_deduplication",
)
NAMESPACE_EVENTS = (
    "admin_set_namespace_deduplication",
    "admin_get_namespace_deduplication",
    "admin_remove_namespace_deduplication",
    "admin_set_max_message_size",
    "admin_get_max_message_size",
)
DELAYED_DELIVERY_EVENTS = (
    "admin_set_delayed_delivery",
    "admin_get_delayed_delivery",
    "admin_remove_delayed_delivery",
)
RETENTION_EVENTS = (
    "admin_set_namespace_retention",
    "admin_get_namespace_retention",
    "admin_remove_namespace_retention",
    "admin_set_namespace_message_ttl",
    "admin_get_namespace_message_ttl",
    "admin_remove_namespace_message_ttl",
)
TOPIC_POLICY_EVENTS = (
    "admin_set_topic_retention",
    "admin_get_topic_retention",
    "admin_remove_topic_retention",
    "admin_set_topic_message_ttl",
    "admin_get_topic_message_ttl",
    "admin_remove_topic_message_ttl",
)
COMPACTION_EVENTS = ("admin_compaction_status", "admin_trigger_compaction")
TRIGGER_EVENTS = (
    "admin_put_trigger",
    "admin_get_trigger",
    "admin_list_triggers",
    "admin_delete_trigger",
)
FUNCTION_EVENTS = (
    "admin_register_function",
    "admin_put_function",
    "admin_get_function",
    "admin_list_functions",
    "admin_function_status",
    "admin_function_stats",
    "admin_stop_function",
    "admin_trigger_function",
    "admin_start_function",
    "admin_restart_function",
    "admin_put_function_state",
    "admin_get_function_state",
    "admin_incr_function_counter",
    "admin_get_function_counter",
    "admin_delete_function_counter",
    "admin_delete_function",
)
SUBSCRIPTION_VERB_EVENTS = (
    "admin_create_subscription",
    "admin_reset_cursor_to_time",
    "admin_skip_messages",
    "admin_skip_all",
    "admin_reset_cursor_to_message_id",
    "admin_expire_messages",
    "admin_expire_all_subscriptions",
    "admin_peek_message",
    "admin_examine_message",
    "admin_get_message_by_id",
)
NAMESPACE_SUBSCRIPTION_EVENTS = (
    "admin_clear_namespace_subscription_backlog",
    "admin_clear_namespace_backlog",
    "admin_unsubscribe_namespace",
)
TOPIC_VERB_EVENTS = (
    "admin_update_partitions",
    "admin_terminate_partitions",
    "admin_truncate",
    "admin_terminate",
    "admin_unload",
)
TENANCY_EVENTS = (
    "tenancy_list_clusters",
    "tenancy_list_tenants",
    "tenancy_create_tenant",
    "tenancy_get_tenant",
    "tenancy_update_tenant",
    "tenancy_list_namespaces",
    "tenancy_create_namespace",
    "tenancy_get_namespace",
    "tenancy_namespace_topics",
    "tenancy_grant_namespace_permission",
    "tenancy_namespace_permissions",
    "tenancy_grant_subscription_permission",
    "tenancy_subscription_permissions",
    "tenancy_revoke_subscription_permission",
    "tenancy_grant_topic_permission",
    "tenancy_topic_permissions",
    "tenancy_revoke_topic_permission",
    "tenancy_revoke_namespace_permission",
    "tenancy_delete_namespace",
    "tenancy_delete_tenant",
)
SCHEMA_EVENTS = (
    "admin_get_schema_compatibility_strategy",
    "admin_set_schema_compatibility_strategy",
    "admin_post_schema",
    "admin_get_schema",
    "admin_get_schema_version",
    "admin_get_all_schemas",
    "admin_get_schema_version_of",
    "admin_test_schema_compatibility",
    "admin_delete_schema",
    "admin_get_allow_auto_update_schema",
    "admin_set_allow_auto_update_schema",
    "admin_get_schema_validation_enforced",
    "admin_set_schema_validation_enforced",
)
RATE_KINDS = ("publish_rate", "dispatch_rate", "subscription_dispatch_rate", "subscribe_rate")


def _quota_events(level: str) -> tuple[str, ...]:
    """The backlog quota and rate samples of ``level`` ("namespace" or "topic")."""
    quotas = ("get_{}_backlog_quotas", "set_{}_backlog_quota", "remove_{}_backlog_quota")
    rates = (f"{verb}_{{}}_{kind}" for kind in RATE_KINDS for verb in ("get", "set", "remove"))
    return tuple("admin_" + name.format(level) for name in (*quotas, *rates))


NAMESPACE_QUOTA_EVENTS = _quota_events("namespace")
TOPIC_QUOTA_EVENTS = _quota_events("topic")
CONSOLE_EVENTS = ("console_page", "console_file", "console_history")
SCENARIOS = (
    ADMIN_EVENTS,
    SHARED_EVENTS,
    EXCLUSIVE_EVENTS,
    PRODUCER_EVENTS,
    NAMESPACE_EVENTS,
    DELAYED_DELIVERY_EVENTS,
    RETENTION_EVENTS,
    TOPIC_POLICY_EVENTS,
    COMPACTION_EVENTS,
    TRIGGER_EVENTS,
    FUNCTION_EVENTS,
    SUBSCRIPTION_VERB_EVENTS,
    NAMESPACE_SUBSCRIPTION_EVENTS,
    TOPIC_VERB_EVENTS,
    TENANCY_EVENTS,
    SCHEMA_EVENTS,
    NAMESPACE_QUOTA_EVENTS,
    TOPIC_QUOTA_EVENTS,
    CONSOLE_EVENTS,
)
