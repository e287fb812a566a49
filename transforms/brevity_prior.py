"""A prior against segments that say almost nothing: the fused flat score of a segment
loses `weight / (1 + n)`, n the number of terms its search text indexes (its full-text
terms: stop words dropped, the speaker's name counted), with the weight of its corpus kind.

Why: the encoders place a short turn near any question about its speaker. "Calvin: Keep
going for it!" is mostly its speaker's name, so it sits close to "What did Calvin buy?";
among the top 10 turns `dense` returned for the LoCoMo dev questions that name a speaker,
turns of at most 8 words were 15.1%, against 6.7% of all turns, nearly all of them the
named speaker's (issue 37, 3.4). A filler turn carries no evidence whatever it matches,
and a chunk of a document is never that short, so the prior is fitted per corpus kind
(`kgmem train hybrid-weights` fits the weights; this on the same dev split), and is 0 for
documents.

Measured on LoCoMo dev, one encoder's cosine minus weight / (1 + n) (before any fusion):
MiniLM turn recall@10 47.5 -> 51.1 / 52.4 / 54.0 at 0.4 / 0.6 / 1.2; e5 52.2 -> 57.1 at
0.4. The weights here apply to the fused score (z-units), after the signals are fused,
where BM25 (its speakers' names a field, `memory.lexical_search`) already holds most
filler down, so the gain there is smaller (`DEFAULT_BREVITY`). `dense` and `bm25` alone
stay the plain searches they are named for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

DEFAULT_BREVITY: dict[str, float] = {"documents": 0.0, "conversations": 2.0}
"""Weight of the prior per corpus kind (`transforms.hybrid_weights.CORPUS_KINDS`), in
z-units of the fused score. Conversations, LoCoMo dev turn recall@10 at 0 / 0.5 / 1 / 2 /
3: `hybrid` 67.9 / 67.9 / 67.9 / 68.2 / 68.2 (session recall@10 91.2 / 91.4 / 91.3 / 91.4
/ 91.0); at 0 / 2: `hipporag_ppr` 78.4 / 78.3, `memorai_dwpr` 76.7 / 77.2, `kgermar_fusion`
79.0 / 79.0, `personalai_beam` 71.6 / 71.8. Documents: 0, no chunk is that short."""
OPTION = "brevity"
SETTINGS_KEY = "brevity_prior"
"""Where a snapshot's retrieval settings pin the weights."""


def pinned_brevity() -> dict[str, Any]:
    """What a new snapshot pins: the prior's weight per corpus kind."""
    return {SETTINGS_KEY: dict(DEFAULT_BREVITY)}


def brevity_weights(retrieval: Mapping[str, Any], options: Mapping[str, Any]) -> dict[str, float]:
    """The weight per corpus kind a query uses: the query's `brevity` option (one value
    for every kind), else the snapshot's pinned weights, else the defaults."""
    weights = dict(DEFAULT_BREVITY)
    weights.update(retrieval.get(SETTINGS_KEY, {}))
    if options.get(OPTION) is not None:
        given = float(options[OPTION])
        if given < 0:
            raise ValueError(f"option {OPTION} must be at least 0, got {given}")
        weights = dict.fromkeys(weights, given)
    return weights


def with_brevity_prior(
    scored: Sequence[tuple[str, float]], terms: Sequence[int], weights: Sequence[float]
) -> list[tuple[str, float]]:
    """`scored` (item, score) with score - weight / (1 + terms) per item, best first (a
    stable sort: ties keep their order)."""
    adjusted = [
        (item, score - weight / (1.0 + n))
        for (item, score), n, weight in zip(scored, terms, weights, strict=True)
    ]
    return sorted(adjusted, key=lambda pair: -pair[1])
