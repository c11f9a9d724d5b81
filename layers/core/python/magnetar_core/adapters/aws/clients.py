"""boto3 clients for the engine, AWS error translation and a count of AWS requests."""

from __future__ import annotations

import functools
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import botocore.loaders
import botocore.session
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from magnetar_core.domain.errors import ConditionFailed, StorageFault, Throttled
from magnetar_core.settings import Settings

_THROTTLED = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "SlowDown",
    "TooManyRequestsException",
}
_CONDITION = {"ConditionalCheckFailedException"}

# A boto3 client (DynamoDB, S3, Step Functions, Glue): untyped, no stubs fit boto3 1.44.5
# (see [tool.mypy] in pyproject.toml).
BotoClient = Any

# A DynamoDB attribute value as boto3's client takes it: {"S": str}, {"N": str},
# {"BOOL": bool}, {"NS": [str, ...]}, ...; an item maps attribute names to them.
AttributeValue = dict[str, object]
Item = dict[str, AttributeValue]


class RequestCounter:
    """Counts AWS requests by ``service.Operation``: the unit of cost on AWS."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        self._local = threading.local()

    def record(self, operation: str) -> None:
        with self._lock:
            self._counts[operation] += 1
        for counter in getattr(self._local, "counters", ()):
            counter[operation] += 1

    @contextmanager
    def on_this_thread(self) -> Iterator[Counter[str]]:
        """Count into the yielded Counter the requests this thread makes within the block,
        and only those: a test measures one call's cost while other threads of the process
        (consumers' polls, drivers, timers) make requests of their own."""
        counter: Counter[str] = Counter()
        counters = self._local.__dict__.setdefault("counters", [])
        counters.append(counter)
        try:
            yield counter
        finally:
            counters.remove(counter)

    def snapshot(self) -> Counter[str]:
        """A copy of the counts so far."""
        with self._lock:
            return Counter(self._counts)

    def hook(self, model: Any, **_kwargs: object) -> None:
        """botocore ``before-call`` handler: one call per AWS request attempt made."""
        self.record(f"{model.service_model.service_name}.{model.name}")


REQUESTS = RequestCounter()


@functools.lru_cache(maxsize=1)
def _data_loader() -> Any:
    """One botocore data loader for the process: it caches the service models and endpoint
    rules it reads (JSON files, ~0.1 s of CPU per client otherwise), so an engine built after
    the first one (a new Lambda container of the local gateway, a test's engine) does not
    read them again."""
    return botocore.loaders.create_loader()


def new_session(region: str) -> Any:
    """A new boto3 session (credentials resolved as boto3 does) on the shared data loader."""
    return session_with(region)


def session_with(region: str, **credentials: str) -> Any:
    """A new boto3 session on the shared data loader with the given credentials
    (``aws_access_key_id``, ``aws_secret_access_key``, ``aws_session_token``), if any."""
    core = botocore.session.get_session()
    core.register_component("data_loader", _data_loader())
    return boto3.session.Session(botocore_session=core, region_name=region, **credentials)


def make_clients(settings: Settings) -> tuple[BotoClient, BotoClient]:
    """(dynamodb, s3) boto3 clients for the settings' endpoint and region."""
    config = Config(
        retries={"mode": "standard", "max_attempts": 4},
        max_pool_connections=64,
        connect_timeout=5,
        read_timeout=30,
    )
    session = new_session(settings.region)
    # Presigned URLs (large entries) with SigV4 and the bucket's regional endpoint: botocore's
    # default presigns S3 with SigV2 on s3.amazonaws.com, which buckets made since 2020 refuse
    # and which other regions redirect. The emulator (an endpoint URL) needs path style.
    s3_config = config.merge(
        Config(
            signature_version="s3v4",
            s3={"addressing_style": "path" if settings.endpoint_url else "virtual"},
        )
    )
    clients: list[BotoClient] = []
    for service, service_config in (("dynamodb", config), ("s3", s3_config)):
        client = session.client(service, endpoint_url=settings.endpoint_url, config=service_config)
        client.meta.events.register("before-call.*.*", REQUESTS.hook)
        clients.append(client)
    dynamodb, s3 = clients
    return dynamodb, s3


def make_stepfunctions_client(settings: Settings) -> BotoClient:
    """A boto3 Step Functions client for the settings' endpoint and region (requests
    counted like the others)."""
    config = Config(retries={"mode": "standard", "max_attempts": 4}, connect_timeout=5)
    session = new_session(settings.region)
    client = session.client("stepfunctions", endpoint_url=settings.endpoint_url, config=config)
    client.meta.events.register("before-call.*.*", REQUESTS.hook)
    return client


def make_engine_clients(settings: Settings) -> tuple[BotoClient, BotoClient, BotoClient]:
    """``(dynamodb, s3, stepfunctions)``, as ``Engine.build`` takes them: made once for
    several engines of one process (boto3 clients are thread-safe; each engine keeps its own
    caches)."""
    return (*make_clients(settings), make_stepfunctions_client(settings))


def error_code(exc: ClientError) -> str:
    return exc.response.get("Error", {}).get("Code", "")


def cancellation_reasons(exc: ClientError) -> list[str]:
    """The per-item codes of a cancelled TransactWriteItems (``"None"`` for an item that
    was not the cause), in request order; [] for any other error."""
    if error_code(exc) != "TransactionCanceledException":
        return []
    return [str(r.get("Code", "None")) for r in exc.response.get("CancellationReasons", [])]


AWS_THROTTLE_RETRY_AFTER_MS = 1000
"""How long a client should wait after AWS throttled a request that outlasted botocore's
retries: DynamoDB's partition capacity and S3's request rates are per second."""


def throttled(action: str) -> Throttled:
    """TooManyRequests (429) with a Retry-After of ``AWS_THROTTLE_RETRY_AFTER_MS``: AWS
    throttled ``action`` and botocore's own retries did not get through."""
    return Throttled(f"AWS throttled {action}; retry with backoff", AWS_THROTTLE_RETRY_AFTER_MS)


@contextmanager
def translated(action: str) -> Iterator[None]:
    """Turn AWS errors raised inside the block into domain errors.

    Raises ConditionFailed for a lost conditional write, TooManyRequests (``throttled``) for
    throttling that outlasted botocore's retries, StorageFault for anything else.
    """
    try:
        yield
    except ClientError as exc:
        code = error_code(exc)
        if code in _CONDITION:
            raise ConditionFailed(action) from exc
        if code in _THROTTLED:
            raise throttled(action) from exc
        raise StorageFault(f"{action} failed: {code or 'unknown AWS error'}") from exc
    except BotoCoreError as exc:
        raise StorageFault(f"{action} failed: {type(exc).__name__}") from exc


def version_condition(version: int, absent_attribute: str = "pk") -> dict[str, object]:
    """The ``put_item`` condition of an optimistic write: the item still has ``version``
    (attribute ``ver``), or, for version 0, has no ``absent_attribute`` yet."""
    if version == 0:
        return {"ConditionExpression": f"attribute_not_exists({absent_attribute})"}
    return {
        "ConditionExpression": "ver = :v",
        "ExpressionAttributeValues": {":v": {"N": str(version)}},
    }


WRITE_TOKEN = "wtok"
"""Attribute of a conditionally written item: the token of the write that made it."""
EARLIER_TOKENS = "ptok"
"""Attribute of a conditionally written item: the tokens of the writes before it that its
writer read (newest first, space-separated, at most ``KEPT_TOKENS``)."""
KEPT_TOKENS = 4
"""Earlier tokens an item keeps: a landed write is recognised while fewer than this many
writes came after it before its writer's check (a handful of milliseconds). 4 tokens of 16
hex digits add 68 bytes to an item."""


def tokens_of(item: Item) -> list[str]:
    """The write tokens an item carries, its own first: the writes it descends from."""
    own = str(item.get(WRITE_TOKEN, {}).get("S", ""))
    earlier = str(item.get(EARLIER_TOKENS, {}).get("S", "")).split()
    return ([own] if own else []) + earlier


def put_conditional(
    dynamodb: BotoClient,
    table: str,
    item: Item,
    key: Item,
    condition: dict[str, object],
    action: str,
    read_tokens: list[str] | None = None,
) -> list[str]:
    """``put_item`` under ``condition``, exactly once even when an answer is lost; returns
    the tokens the written item carries (``tokens_of``).

    botocore retries a write whose answer was lost (a read timeout, a 5xx after the write
    landed); the retry then fails the condition against the write itself. So every write
    carries a fresh token (``wtok``), and a failed condition is checked with a strongly
    consistent read of ``key``: when the item holds this write's token, the write landed
    and this is a success. Another writer may have replaced the item between the landed
    write and that read (it read the landed write, then wrote): so an item also carries the
    tokens of the item its writer read (``read_tokens``, from ``tokens_of`` of the item
    the caller read, newest first), and a write is known to have landed when a later item
    descends from it. Raises ConditionFailed (someone else wrote first), TooManyRequests,
    StorageFault (see ``translated``).
    """
    token = uuid.uuid4().hex[:16]  # 64 random bits: unique among an item's writes
    earlier = (read_tokens or [])[:KEPT_TOKENS]
    extra: Item = {WRITE_TOKEN: {"S": token}}
    if earlier:
        extra[EARLIER_TOKENS] = {"S": " ".join(earlier)}
    with translated(action):
        try:
            dynamodb.put_item(TableName=table, Item={**item, **extra}, **condition)
            return [token, *earlier]
        except ClientError as exc:
            if error_code(exc) not in _CONDITION:
                raise
            stored = (
                dynamodb.get_item(
                    TableName=table, Key=key, ConsistentRead=True,
                    ProjectionExpression=f"{WRITE_TOKEN}, {EARLIER_TOKENS}",
                ).get("Item")
                or {}
            )  # fmt: skip
            if token not in tokens_of(stored):
                raise
    return [token, *earlier]  # it landed: a retry of it, or a later write, says so
