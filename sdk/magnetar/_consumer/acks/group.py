"""The open group of a consumer's acks and nacks: what was queued since the last group went
out, as Pulsar's client groups acknowledgements (``magnetar._consumer.acks.tracker`` decides when a group
goes). Not thread-safe: the ``AckTracker`` calls it under its lock."""

from __future__ import annotations

from typing import TYPE_CHECKING

from magnetar.message_id import MessageId

from .redelivery import Redelivery

if TYPE_CHECKING:
    from magnetar._consumer.sub import Sub

__all__ = ["AckGroup"]


class AckGroup:
    """Individual acks, the highest cumulative ack and the nacks (by delay left) per
    sub-consumer; ``seen`` keeps the redelivery count a nacked id was delivered with (kept
    across groups: a nack may wait for its batch)."""

    def __init__(self) -> None:
        self.acks: dict[Sub, list[str]] = {}
        self.cumulative: dict[Sub, MessageId] = {}  # the highest per sub-consumer
        self.nacks: dict[tuple[Sub, int | None], list[str]] = {}  # (sub, delay left) -> ids
        self.seen: dict[tuple[Sub, str], int] = {}
        self.count = 0  # acks and nacks in the group
        self.deadline: float | None = None  # when the group goes at the latest (clock seconds)

    def ack(self, sub: Sub, text: str) -> None:
        self.acks.setdefault(sub, []).append(text)
        self.count += 1

    def ack_cumulative(self, sub: Sub, msg_id: MessageId) -> None:
        current = self.cumulative.get(sub)
        if current is None or current < msg_id:
            self.cumulative[sub] = msg_id
        self.count += 1

    def nack(self, sub: Sub, text: str, left_ms: int | None) -> None:
        """Queue the nack of ``text`` with ``left_ms`` of its delay left (None: all)."""
        self.nacks.setdefault((sub, left_ms), []).append(text)
        self.count += 1

    def drop_nacks(self, sub: Sub | None = None) -> None:
        """Forget the queued nacks of ``sub`` (None: every sub-consumer's) and the counts
        they carry."""
        keys = [k for k in self.nacks if sub is None or k[0] is sub]
        self.count -= sum(len(self.nacks.pop(k)) for k in keys)
        for key in [k for k in self.seen if sub is None or k[0] is sub]:
            del self.seen[key]

    def take(self, cfg: Redelivery) -> list[tuple[Sub, str, dict]]:
        """The group's requests ``(sub, action, body)``, acks before nacks; the group is
        empty afterwards."""
        out: list[tuple[Sub, str, dict]] = []
        for sub, ids in self.acks.items():
            out.append((sub, "ack", {"messageIds": ids, "cumulative": False}))
        for sub, mid in self.cumulative.items():
            out.append((sub, "ack", {"messageIds": [str(mid)], "cumulative": True}))
        for (sub, left), ids in self.nacks.items():
            seen = {t: self.seen.pop((sub, t)) for t in ids if (sub, t) in self.seen}
            out.append((sub, "nack", cfg.nack_body(ids, left, seen)))
        self.acks, self.cumulative, self.nacks = {}, {}, {}
        self.count, self.deadline = 0, None
        return out
