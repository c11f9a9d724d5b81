"""The log adapter's reading of DynamoDB's transaction errors, which the emulator never
returns (moto runs one request at a time): conflicts are lost races, throttling is
throttling. Stubbed responses, no network."""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import Stubber

from magnetar_core.adapters.aws.log import LogStore
from magnetar_core.domain.errors import ConditionFailed, StorageFault, TooManyRequests
from magnetar_core.domain.log import IndexEntry

PK = "persistent://public/default/t|1"
ENTRY = IndexEntry(
    entry_id=0, object_key="o", offset=0, length=10, count=1, batched=False,
    publish_min_ms=1, publish_max_ms=1, producer="ingest-sns-t", sequence_min=0, sequence_max=0,
)  # fmt: skip


@pytest.fixture
def stubbed():
    client = boto3.client(
        "dynamodb", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with Stubber(client) as stubber:
        yield LogStore(client, "log", "cursors"), stubber


def cancelled(stubber: Stubber, *codes: str) -> None:
    stubber.add_client_error(
        "transact_write_items",
        "TransactionCanceledException",
        response_meta={},
        modeled_fields={"CancellationReasons": [{"Code": c} for c in codes]},
    )


def test_a_plain_append_meeting_an_ingest_transaction_is_a_lost_race(stubbed):
    log, stubber = stubbed
    stubber.add_client_error("put_item", "TransactionConflictException")

    with pytest.raises(ConditionFailed):
        log.append(PK, ENTRY)


@pytest.mark.parametrize(
    ("codes", "outcome"),
    [
        (("None", "ConditionalCheckFailed"), False),
        (("ConditionalCheckFailed", "ConditionalCheckFailed"), False),
        (("ConditionalCheckFailed", "None"), ConditionFailed),
        (("TransactionConflict", "None"), ConditionFailed),
        (("None", "ThrottlingError"), TooManyRequests),
        (("ValidationError", "None"), StorageFault),
    ],
)
def test_a_cancelled_once_commit_reads_as_duplicate_lost_race_throttling_or_fault(
    stubbed, codes, outcome
):
    log, stubber = stubbed
    cancelled(stubber, *codes)

    if outcome is False:
        assert log.append_once(PK, ENTRY, "sns-1", 1_900_000_000) is False
    else:
        with pytest.raises(outcome):
            log.append_once(PK, ENTRY, "sns-1", 1_900_000_000)
