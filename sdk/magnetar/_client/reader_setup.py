"""``Client.create_reader`` behind the public signature: its arguments checked as
pulsar-client checks them, and the reader opened on its non-durable cursor."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from magnetar._encryption.key_reader import Crypto, CryptoKeyReader
from magnetar._enums import ConsumerCryptoFailureAction
from magnetar._topics import parse_topic
from magnetar._validate import check_type, check_type_or_none
from magnetar.message_id import MessageId
from magnetar.reader import Reader
from magnetar.schema import BytesSchema, Schema

if TYPE_CHECKING:
    from magnetar._consumer.client_view import ClientView

__all__ = ["open_reader", "validate_reader"]


def validate_reader(a: dict[str, Any]) -> None:
    """Check the arguments of ``create_reader`` (given as a dict); raises ValueError naming
    the argument of a wrong type, or a ``reader_listener`` that is not callable."""
    check_type(str, a["topic"], "topic")
    check_type(MessageId, a["start_message_id"], "start_message_id")
    check_type_or_none(Schema, a["schema"], "schema")
    check_type(int, a["receiver_queue_size"], "receiver_queue_size")
    check_type_or_none(str, a["reader_name"], "reader_name")
    check_type_or_none(str, a["subscription_role_prefix"], "subscription_role_prefix")
    check_type(bool, a["is_read_compacted"], "is_read_compacted")
    check_type_or_none(CryptoKeyReader, a["crypto_key_reader"], "crypto_key_reader")
    check_type(bool, a["start_message_id_inclusive"], "start_message_id_inclusive")
    check_type(ConsumerCryptoFailureAction, a["crypto_failure_action"], "crypto_failure_action")
    if a["reader_listener"] is not None and not callable(a["reader_listener"]):
        raise ValueError("Argument reader_listener is expected to be a function")


def open_reader(client: ClientView, a: dict[str, Any]) -> Reader:
    """A reader for ``client.create_reader``'s arguments ``a`` (see there for what it
    raises)."""
    validate_reader(a)
    schema = a["schema"]
    return Reader(client, parse_topic(a["topic"]), a["start_message_id"],
                  reader_name=a["reader_name"], receiver_queue_size=a["receiver_queue_size"],
                  inclusive=a["start_message_id_inclusive"],
                  reader_listener=a["reader_listener"], read_compacted=a["is_read_compacted"],
                  schema=schema if schema is not None else BytesSchema(),
                  crypto=Crypto.of(a["crypto_key_reader"], a["crypto_failure_action"]))  # fmt: skip
