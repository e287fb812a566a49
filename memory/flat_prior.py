"""What every graph strategy starts from: the `hybrid` ranking of the query, as seed
segments, as a prior distribution over segments, and as the ranking a strategy falls back
to where its graph adds nothing.

- `FlatPrior.distribution`: a softmax of the fused hybrid scores at `TEMPERATURE` (in
  z-units of the fused score), over the pool of candidates: the reset vector of a random
  walk (HippoRAG 2 seeds passages from dense scores; the flat ranking here is stronger).
- `FlatPrior.top_segments`: the first segments of the ranking, the seed segments of
  MemORAI, PersonalAI's episodes and REAL and GRAM roots.
- `FlatPrior.seed_entities`: the entities those segments mention, weighted by the
  segments' prior mass: the roots of an entity search when the query names none, or beside
  the ones it names.
- What a strategy's traversal makes of the prior is blended back onto it by
  `memory.traversal.blended` (a flat share per corpus kind).

Where the papers are silent (none of them starts from a fused flat ranking), chosen here
on the dev sets: temperature 0.5 and damping 0.5 gave MuSiQue passage recall@5 76.3 and
LoCoMo turn recall@10 76.2 in the passage walk, against 75.0-78.2 and 71.4-77.9 over
temperatures 0.25-1.0 and dampings 0.3-0.7, so the gain does not hinge on the values.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.hybrid import candidate_pool, hybrid_ranking, kept_recent
from transforms.rank_fusion import Normalised, normalised

TEMPERATURE = 0.5
SEED_SEGMENTS = 10
"""Seed segments a graph search starts from (the top of the flat ranking)."""
T = TypeVar("T")


@dataclass(frozen=True)
class FlatPrior:
    """The query's fused flat ranking (best first) and its explanation."""

    fused: list[tuple[str, float]]
    explanation: dict[str, Any]

    @functools.cached_property
    def normalised(self) -> Normalised | None:
        """The fused ranking z-normalised (`transforms.rank_fusion.normalised`), once: every
        graph strategy of the query blends its traversal with it (`memory.traversal`)."""
        return normalised(self.fused)

    def distribution(self, temperature: float = TEMPERATURE) -> dict[str, float]:
        """Softmax of the fused scores / `temperature`, over the ranked candidates."""
        if not self.fused:
            return {}
        scores = np.array([score for _, score in self.fused])
        weights = np.exp((scores - scores.max()) / temperature)
        weights /= weights.sum()
        return {s: w for (s, _), w in zip(self.fused, weights.tolist(), strict=True)}

    def top_segments(self, count: int = SEED_SEGMENTS) -> list[str]:
        return [segment for segment, _ in self.fused[:count]]

    def seed_entities(
        self, view: SnapshotView, limit: int | None = None, count: int = SEED_SEGMENTS
    ) -> dict[str, float]:
        """Entity id -> summed prior mass of the top `count` segments that mention it, best
        first, the first `limit` of them (all with None)."""
        weights = self.distribution()
        found: dict[str, float] = {}
        for segment in self.top_segments(count):
            for entity in view.segment(segment, ("entity_ids",))["entity_ids"] or []:
                found[entity] = found.get(entity, 0.0) + weights[segment]
        ranked = sorted(found.items(), key=lambda item: (-item[1], item[0]))
        return dict(ranked[:limit])

    def summary(self, count: int = 5) -> dict[str, Any]:
        """For explanations: the flat ranking's head and how it was fused."""
        return {
            "top": [[s, round(score, 4)] for s, score in self.fused[:count]],
            "weights": self.explanation.get("weights"),
            "signals": self.explanation.get("signals"),
        }


def flat_prior(view: SnapshotView, query: QueryContext) -> FlatPrior:
    """The `hybrid` ranking of the query over a pool of at least `POOL` candidates (kept
    per query by `hybrid_ranking`)."""
    fused, explanation = hybrid_ranking(view, query, candidate_pool(query))
    return FlatPrior(fused, explanation)


def kept_per_query(
    view: SnapshotView, strategy: str, query: QueryContext, compute: Callable[[], T]
) -> T:
    """`compute()`, a strategy's graph work that depends on the query but not on its k
    beyond the flat prior's pool, kept per (strategy, text, pool, options, fact
    coordinates) for the view's last `KEPT_RANKINGS` queries: `Memory.query` asks again
    with 2k when k segments fill fewer than k passages, and then only the cut at k
    changes, so the walk or path search is not run a second time. Shared, so callers
    must not change what it returns."""
    key = (
        strategy,
        query.text,
        candidate_pool(query),
        json.dumps(query.options, sort_keys=True, default=str),
        *query.fact_filter,
    )
    return kept_recent(view, "graph_work", key, compute)
