"""Length limits of the names a request carries in its path, in UTF-8 bytes.

Pulsar sets no limit, but the keys built from names have one: a DynamoDB partition key at
most 2048 bytes, a sort key at most 1024, an S3 object key at most 1024. The longest keys
are the compacted segment objects, ``compacted/<domain>/<tenant>/<namespace>/<topic>
-partition-<n>/<ledger>/<run id>/<first>-<last>``; with these limits every key stays valid
(tests/unit/test_edge_errors.py builds the longest of each).
"""

from __future__ import annotations

import re

from magnetar_core.domain.errors import InvalidMessage, InvalidTopicName

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
"""Pulsar's Java ``long``: the range of every integer the API takes."""

MAX_TENANT_BYTES = 128
MAX_NAMESPACE_BYTES = 128
MAX_TOPIC_BYTES = 512
"""Of a topic's local name without a partition suffix (``-partition-<n>``, n < 2^63)."""
MAX_SUBSCRIPTION_BYTES = 256
MAX_PRODUCER_NAME_BYTES = 256

_PARTITION_SUFFIX = re.compile(r"-partition-[0-9]{1,19}$")
_LIMITS = {
    "tenant": (MAX_TENANT_BYTES, InvalidTopicName),
    "namespace": (MAX_NAMESPACE_BYTES, InvalidTopicName),
    "topic": (MAX_TOPIC_BYTES, InvalidTopicName),
    "subscription": (MAX_SUBSCRIPTION_BYTES, InvalidMessage),
    "producer_name": (MAX_PRODUCER_NAME_BYTES, InvalidMessage),
}


def check_path_names(arguments: dict[str, str]) -> None:
    """Check the names among a route's ``arguments``; raises InvalidTopicName (tenant,
    namespace, topic) or InvalidMessage (subscription, producer name) for one too long."""
    for name, value in arguments.items():
        if name not in _LIMITS:
            continue
        limit, error = _LIMITS[name]
        measured = _PARTITION_SUFFIX.sub("", value, count=1) if name == "topic" else value
        size = len(measured.encode("utf-8", "surrogatepass"))
        if size > limit:
            kind = name.replace("_", " ")
            what = f"{kind} name" if name in ("topic", "subscription", "producer_name") else kind
            raise error(
                f"The {what} is {size} bytes long; at most {limit} bytes (UTF-8) are allowed, "
                "so that the storage keys made from it stay within DynamoDB's and S3's limits"
            )
