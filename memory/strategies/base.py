"""What a strategy is: a function from (view, query) to a ranking with its explanation."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memory.snapshot_view import QueryContext, SnapshotView


@dataclass
class Ranking:
    """Segment ids with scores, best first, and how the strategy got there."""

    scored: list[tuple[str, float]]
    explanation: dict[str, Any] = field(default_factory=dict)
    paths: Mapping[str, list[str]] = field(default_factory=dict)
    """Per segment id, the graph paths (GRAM-linearized, `[s] -[p]-> [o] ; …`) that led
    to it; strategies without paths leave it empty."""


Strategy = Callable[[SnapshotView, QueryContext], Ranking]
