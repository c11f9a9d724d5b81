"""Seek and last-message-id over HTTP, shared by ``Consumer`` and ``Reader``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from magnetar import exceptions as exc
from magnetar._topics import parse_topic
from magnetar.message_id import MessageId

if TYPE_CHECKING:
    from .core import Core
    from .sub import Sub


def id_text(message_id: MessageId) -> str:
    """The wire form of a start or seek position: ``earliest``, ``latest`` or ``l:e:p:b``."""
    if message_id == MessageId.earliest:
        return "earliest"
    if message_id == MessageId.latest:
        return "latest"
    return str(message_id)


def seek(core: Core, target: Any, inclusive: bool) -> None:
    """Reset every sub-consumer of ``core`` to ``target``: a MessageId, or a publish time in
    epoch ms (int). A message id of one partition moves only that partition.

    Raises ValueError for another type, and what the service answers.
    """
    if isinstance(target, MessageId):
        body: dict = {"messageId": id_text(target), "inclusive": inclusive}
        partition = target.partition()
        subs = [s for s in core.subs if partition < 0 or s.partition in (partition, -1)]
    elif isinstance(target, int) and not isinstance(target, bool):
        body, subs = {"timestamp": target}, list(core.subs)
    else:
        raise ValueError(
            f"Argument messageid is expected to be of type 'MessageId' or 'int' and not "
            f"'{type(target).__name__}'"
        )
    for sub in subs:
        core.post(sub, "seek", body)
    core.ack_tracker.clear_unacked()
    core.ack_tracker.clear_acked()  # messages acknowledged before may rightly come again
    core.clear_queue()


def last_message_id(core: Core) -> MessageId:
    """The last message id of the consumer's single topic or partition (earliest when empty).

    Raises OperationNotSupported on multi-topic and partitioned consumers.
    """
    if len(core.subs) != 1:
        raise exc.OperationNotSupported(
            "get_last_message_id needs a single non-partitioned topic; ask each partition's consumer"
        )
    sub = core.subs[0]
    resp = core.t.call("GET", f"/admin/v2/{parse_topic(sub.topic).path()}/lastMessageId")
    if not isinstance(resp, dict) or resp.get("entryId", -1) < 0:
        return MessageId.earliest
    return MessageId(resp["partitionIndex"], resp["ledgerId"], resp["entryId"], resp["batchIndex"])


def reached_end_of_topic(core: Core, after: Callable[[Sub], MessageId | None]) -> bool:
    """True when every topic or partition of ``core`` was terminated and nothing is left
    after ``after(sub)`` (the last message handed out there; None: none yet) and nothing is
    queued: no message will ever come again. One ``lastMessageId`` request per partition."""
    with core.cond:
        if core.queue or not core.subs:
            return False
        subs = list(core.subs)
    for sub in subs:
        resp = core.t.call("GET", f"/admin/v2/{parse_topic(sub.topic).path()}/lastMessageId")
        if not isinstance(resp, dict) or resp.get("terminated") is not True:
            return False
        if resp.get("entryId", -1) < 0:
            continue  # terminated while empty
        last = MessageId(resp["partitionIndex"], resp["ledgerId"], resp["entryId"],
                         resp["batchIndex"])  # fmt: skip
        taken = after(sub)
        if taken is None or taken < last:
            return False
    return True
