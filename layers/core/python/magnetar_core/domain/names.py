"""Topic names: defined once in ``magnetar_wire.names`` (shared with the SDK); re-exported
here for the engine's existing imports."""

from magnetar_wire.names import DOMAINS, PARTITION_SUFFIX, InvalidTopicName, TopicName

__all__ = ["DOMAINS", "PARTITION_SUFFIX", "InvalidTopicName", "TopicName"]
