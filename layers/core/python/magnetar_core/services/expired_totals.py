"""What the expire job calls before deleting a ledger's oldest index items: fold their
messages, bytes and entries into the ledger's ``$expired`` totals, so that the stats'
``msgInCounter``/``bytesInCounter`` never go down (as Pulsar's, across trimmed ledgers).

One index query over the prefix and one conditional write per ledger and run; nothing on
the produce path. Idempotent: a run that crashes after folding and before deleting leaves
items the stats already skip (they count entries above ``through`` only from the index), and
the next run folds nothing twice. Runs of the job on one ledger must not overlap (the job's
schedule runs one at a time); a lost race shows as ConditionFailed and keeps the stored
totals.
"""

from __future__ import annotations

from magnetar_core.domain.counters import ExpiredTotals
from magnetar_core.domain.errors import ConditionFailed
from magnetar_core.ports import LogStore, ProducerStateStore


def fold_expired(
    log: LogStore, producers: ProducerStateStore, pk: str, through: int
) -> ExpiredTotals:
    """Make ledger ``pk``'s expired totals cover its entries up to ``through`` (inclusive),
    about to be deleted; returns the totals stored. Raises StorageFault/TooManyRequests from
    the stores (then nothing may be deleted: the caller's run leaves the ledger for later)."""
    totals = producers.expired_totals(pk)
    if through <= totals.through:
        return totals
    folded = totals.fold(log.range_counts(pk, totals.through + 1, through), through)
    try:
        producers.put_expired_totals(pk, folded)
    except ConditionFailed:  # stored meanwhile, as far or further: keep those
        return producers.expired_totals(pk)
    return folded
