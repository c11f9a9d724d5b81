"""The local stack's commit signal: one per process, shared by every handler container.

Each container builds its own engine from the environment (``COMMIT_SIGNAL=local``, set by
``LocalStack``); ``magnetar_core.engine.commit_signal_of`` imports ``SHARED`` from here, so
a commit in a produce container wakes the long-polls waiting in receive containers, as
nothing on AWS can (there, waits poll: ``magnetar_core.domain.check_interval``). Several
stacks in one process share it too: their log keys may coincide, which costs at most a
spurious wake (one extra head check), never a lost one.
"""

from __future__ import annotations

from magnetar_core.adapters.memory.commit_signal import CommitSignal

__all__ = ["SHARED"]

SHARED = CommitSignal()
"""The process's signal."""
