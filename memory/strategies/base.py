"""What a strategy is: a function from (view, query) to a ranking with its explanation."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memory.snapshot_view import QueryContext, SnapshotView


@dataclass
class Ranking:
    """Segment ids with scores, best first, and how the strategy got there."""

    scored: list[tuple[str, float]]
    explanation: dict[str, Any] = field(default_factory=dict)


Strategy = Callable[[SnapshotView, QueryContext], Ranking]
