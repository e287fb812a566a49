"""Running retrieval benchmarks against a snapshot through the `Memory` API.

The evaluation assets and `kgmem eval` call these, so a figure in the UI and one printed by
the CLI come from the same code.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memory.memory import Memory
from transforms.evaluation.timeqa import TimeQaSet, hit_at_k


def temporal_hits(
    memory: Memory, dataset: TimeQaSet, strategies: Sequence[str], ks: Sequence[int] = (1, 3, 5)
) -> list[dict[str, object]]:
    """hit@k per strategy, with the question's reference time and ignoring it, as rows
    (strategy, metric, value)."""
    rows: list[dict[str, object]] = []
    for strategy in strategies:

        def retrieve(
            text: str, k: int, valid_at: datetime | None, strategy: str = strategy
        ) -> list[str]:
            result = memory.query(text, strategy=strategy, k=k, valid_at=valid_at)
            return [hit.provenance["title"] for hit in result]

        for mode, by_k in hit_at_k(dataset.questions, retrieve, ks).items():
            rows.extend(
                {"strategy": strategy, "metric": f"hit@{k}_{mode}", "value": value}
                for k, value in by_k.items()
            )
    return rows
