"""The one percentile rule of every benchmark report."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of ``values`` (``fraction`` in [0, 1]): the smallest
    value with at least ``fraction`` of them at or below it (rank ``ceil(fraction * n)``,
    at least 1). Raises ValueError when ``values`` is empty."""
    if not values:
        raise ValueError("no values: no percentile")
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered) - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]
