"""KGERMAR multi-bank retrieval (paper §2.4, eqs. 8–11, Algorithm 2): top candidates from
three memory banks, re-ranked by ``λ1·s_ctx + λ2·s_sem + λ3·s_kg`` with λ1+λ2+λ3 = 1.

Banks, as this offline pipeline can hold them:
- contextual: the paper's layer-13 key/value pairs need the fine-tuned LM, so the
  contextual bank here is lexical: BM25 over the segments' full-text index;
- semantic: dense segment vectors (cosine of the query embedding, eq. 9);
- structural: the fused R-GCN + text entity vectors of the snapshot's "structure" table
  (eq. 10): the query vector against them gives the top entities, and an entity's
  cosine passes to the retrievable segments that mention it (`graph.entity_segments`);
  a segment takes the best cosine among its retrieved entities, ties broken by the sum
  (segments naming several retrieved entities first).

Choices where the paper is silent or does not fit segments:
- budget: the paper takes ⌊K/3⌋ per bank because its banks hold different objects; here
  every bank yields segments, so an equal split would return fewer than K segments. Each
  bank contributes its top K by default; option "bank_budget": "split" restores ⌊K/3⌋
  (at least 1);
- score scales (dot, BM25 and cosine are not comparable): each bank's scores are divided
  by that bank's best score for the query, so every bank's top item scores 1; a segment
  absent from a bank's top list scores 0 there (Algorithm 2, lines 8–10);
- λ: the paper learns them by gradient descent and gives no initial values; the default
  is uniform (1/3 each). λ fitted on a dev split (`memory.fusion_weights`,
  `kgmem train fusion-weights`) are read from `<home>/models/fusion_weights.json` when
  present; option "fusion_weights" overrides both;
- a snapshot without a "structure" table (built before it existed) is served by the two
  other banks with their λ renormalised to sum to 1, and the explanation says so;
- entities searched in the structural bank: option "entity_k", default K.

Options read: "fusion_weights" (three numbers in bank order contextual, semantic,
structural, or a mapping bank -> weight; normalised to sum 1), "bank_budget" ("k" or
"split"), "entity_k" (int).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memory.csr import row_entries
from memory.flat_prior import flat_prior, with_graph_bonus
from memory.fusion_weights import BANKS, resolve_weights
from memory.graph import MemoryGraph, graph_of
from memory.linking import beside
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking
from memory.strategies.hybrid import hybrid_signals
from memory.top import top_positions

SHOWN = 5
"""Items per bank listed in the explanation."""


@dataclass
class Banks:
    """Per-bank top segments of one query: raw and max-normalised scores."""

    raw: dict[str, list[tuple[str, float]]]
    normalised: dict[str, dict[str, float]]
    entities: list[tuple[str, float]] = field(default_factory=list)
    """Structural bank: (entity id, cosine) of the entities searched, best first."""
    missing: list[str] = field(default_factory=list)
    """Banks the snapshot cannot serve, with the reason."""


def bank_budget(k: int, options: Mapping[str, Any]) -> int:
    """Per-bank budget: K, or the paper's ⌊K/3⌋ (at least 1) with "bank_budget": "split"."""
    mode = options.get("bank_budget", "k")
    if mode not in ("k", "split"):
        raise ValueError(f"bank_budget must be 'k' or 'split', got {mode!r}")
    return max(1, k // 3) if mode == "split" else k


def retrieve_banks(
    view: SnapshotView, query: QueryContext, budget: int, entity_k: int | None = None
) -> Banks:
    """Top `budget` segments of each bank for the query."""
    return start_banks(view, query, budget, entity_k)()


def start_banks(
    view: SnapshotView, query: QueryContext, budget: int, entity_k: int | None = None
) -> Callable[[], Banks]:
    """The structural bank's entity search, started `beside` the caller where it is
    LanceDB's indexed search (which waits in LanceDB's runtime while the caller computes
    the query's flat prior), else left for the function returned; that function takes
    the contextual and semantic banks from the prior's own BM25 and dense lists
    (`hybrid_signals`, top max(`POOL`, 2k) >= `budget`): a search's top `budget` is the
    head of its top pool (both searches are exhaustive top-k scans: no candidate depends
    on the limit), so each bank is the list a search of its own would return, without
    running that search again beside the prior's.

    A table held in memory (`StructureRows`, at most `IN_MEMORY_ROWS`) is searched after
    the prior: its product is ~1-3 ms of CPU, and on two cores a worker doing it slowed
    the prior's searches. Measured at 100k facts (60 queries in processes of their own
    after the page cache was warmed, three alternating rounds): p95 17.7-20.3 ms after
    the prior against 26.7-31.3 beside it, p50 alike; at 1M (LanceDB's search) beside
    stayed ahead, p50 20.4-22.8 against 20.0-27.7 ms, p95 27.7-32.8 against 35.1-42.1."""
    missing: list[str] = []
    try:
        structure = view.table("structure")
    except LookupError as exc:
        structure = None
        missing.append(f"structural: {exc}")
    vector = view.embed_query(query.text)
    k = entity_k or budget
    in_memory = _structure_rows(view, structure) if structure is not None else None
    entities = (
        beside(_structural_entities, structure, vector, k)
        if structure is not None and in_memory is None
        else None
    )

    def finish() -> Banks:
        signals = hybrid_signals(view, query)
        raw = {"contextual": signals["bm25"][:budget], "semantic": signals["dense"][:budget]}
        banks = Banks(raw=raw, normalised={}, missing=missing)
        if in_memory is not None:
            banks.entities = in_memory.nearest(vector, k)
        elif entities is not None:
            banks.entities = entities.result()
        if structure is not None:
            raw["structural"] = _entity_segments(view, query, banks.entities, budget)
        banks.normalised = {name: _normalise(scored) for name, scored in raw.items()}
        return banks

    return finish


def fuse(banks: Banks, weights: Mapping[str, float], k: int) -> list[tuple[str, float]]:
    """Algorithm 2, lines 6–12: the union of the banks' segments by λ-weighted score."""
    total: dict[str, float] = {}
    for name, scores in banks.normalised.items():
        for segment, score in scores.items():
            total[segment] = total.get(segment, 0.0) + weights.get(name, 0.0) * score
    ranked = sorted(total.items(), key=lambda item: (-item[1], item[0]))
    return [(segment, round(score, 6)) for segment, score in ranked[:k]]


def kgermar_fusion(view: SnapshotView, query: QueryContext) -> Ranking:
    budget = bank_budget(query.k, query.options)
    entity_k = int(query.options.get("entity_k", query.k))
    pending = start_banks(view, query, budget, entity_k)
    prior = flat_prior(view, query)
    banks = pending()
    weights, source = resolve_weights(view, query.options)
    used = {b: weights[b] for b in BANKS if b in banks.raw}
    norm = sum(used.values())
    if norm <= 0:
        raise ValueError(f"fusion weights {weights} give no weight to the available banks")
    used = {b: round(w / norm, 6) for b, w in used.items()}
    graph = graph_of(view, query)
    explanation = {
        "strategy": "kgermar_fusion",
        "weights": used,
        "weights_source": source,
        "bank_budget": budget,
        "banks": {
            name: {"kind": kind, "top": [[s, score] for s, score in banks.raw[name][:SHOWN]]}
            for name, kind in (
                ("contextual", "bm25 full-text"),
                ("semantic", "dense segment vectors"),
                ("structural", "fused R-GCN entity vectors -> mentioning segments"),
            )
            if name in banks.raw
        },
        "structural_entities": [[_name(graph, e), round(s, 4)] for e, s in banks.entities],
        "model": view.snapshot.embedding_model,
    }
    if banks.missing:
        explanation["missing_banks"] = banks.missing
        explanation["note"] = (
            "snapshot has no structural bank; fused the contextual and semantic banks "
            "with their weights renormalised to sum to 1"
        )
    explanation["flat"] = prior.summary()
    own = fuse(banks, used, query.k)
    explanation["fused_banks"] = [[s, round(score, 4)] for s, score in own[:SHOWN]]
    fused = with_graph_bonus(prior, own)
    return Ranking(fused[: query.k], explanation)


def _name(graph: MemoryGraph, entity: str) -> str:
    """An entity's name (its id where the snapshot's entities lack it), looked up through
    the graph's cached positions rather than a per-query map of every entity."""
    position = graph.entity_position.get(entity)
    return entity if position is None else graph.entity_names[position]


IN_MEMORY_ROWS = 50_000
"""Structure tables of at most this many rows are searched in memory (`StructureRows`).
A table this small has no vector index (LanceDB indexes the larger ones), so LanceDB
scans every row from its files at each query: 65-99 ms of CPU a search over the 25k
entities of the 100k-fact bench, against ~3 ms for the product of the rows held in
memory (38 MB there). Larger tables keep LanceDB's index, whose search costs ~5 ms."""


@dataclass(frozen=True)
class StructureRows:
    """A structure table's entity ids and vectors, held for exact searches in memory."""

    entity_ids: list[str]
    vectors: np.ndarray
    """float32, a row per entity."""
    norms: np.ndarray
    """Each row's squared length."""

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The `k` rows nearest to `vector` by squared L2 distance, as LanceDB's exact
        search ranks them (ties by row), with the cosine 1 - d/2 it reports for unit
        vectors: |x|^2 - 2 x.q + |q|^2 by one product, equal to LanceDB's distance up to
        float32 rounding."""
        query = np.asarray(vector, np.float32)
        distance = self.norms - 2.0 * (self.vectors @ query) + np.float32(query @ query)
        top = top_positions(-distance, k)
        return [(self.entity_ids[i], round(1.0 - float(distance[i]) / 2.0, 6)) for i in top]


def _structure_rows(view: SnapshotView, table: Any) -> StructureRows | None:
    """The structure table's rows in memory when it has at most `IN_MEMORY_ROWS`, read
    once per view."""
    key = "kgermar_structure_rows"
    if key not in view.cache:
        rows = None
        if table.count_rows() <= IN_MEMORY_ROWS:
            data = table.to_arrow().select(["entity_id", "vector"])
            column = data.column("vector").combine_chunks()
            width = column.type.list_size  # fixed: an empty table reshapes too
            vectors = np.asarray(column.flatten(), np.float32).reshape(len(column), width)
            rows = StructureRows(
                data.column("entity_id").to_pylist(),
                vectors,
                np.einsum("ij,ij->i", vectors, vectors),
            )
        view.cache[key] = rows
    return view.cache[key]


def _structural_entities(table: Any, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
    """The `k` nearest entities of the LanceDB structure table, (entity id, cosine), read
    as two Arrow columns rather than a dict per hit (~1 ms less CPU a search at 1M
    facts)."""
    hits = (
        table.search(vector, vector_column_name="vector")
        .select(["entity_id", "_distance"])
        .limit(k)
        .to_arrow()
    )
    return [
        (entity, round(1.0 - distance / 2.0, 6))
        for entity, distance in zip(
            hits.column("entity_id").to_pylist(), hits.column("_distance").to_pylist(), strict=True
        )
    ]


def _entity_segments(
    view: SnapshotView, query: QueryContext, entities: list[tuple[str, float]], budget: int
) -> list[tuple[str, float]]:
    """Retrievable segments mentioning the entities: best entity cosine, then summed.

    Read from the searched entities' rows of `graph.entity_segments` (a segment's best and
    summed weight over the searched entities it mentions), not the whole segment x entity
    matrix: each segment's maximum and sum are those of its row of the weighted mention
    matrix (`mentions` holds ones), summed in the same entity order. From the CSR arrays
    (`memory.csr.row_entries`): scipy's row selection, product by a diagonal and row
    reductions took ~2.8 ms a query at 1M facts."""
    graph = graph_of(view, query)
    weight = np.zeros(graph.n_entities)
    for entity, score in entities:
        if entity in graph.entity_position:
            weight[graph.entity_position[entity]] = max(score, 0.0)
    searched = np.flatnonzero(weight)
    segments, _, counts = row_entries(graph.entity_segments, searched)
    if not len(segments):
        return []
    mentioning, entry_of = np.unique(segments, return_inverse=True)
    weights = np.repeat(weight[searched], counts)
    best = np.zeros(len(mentioning))
    np.maximum.at(best, entry_of, weights)
    summed = np.bincount(entry_of, weights=weights, minlength=len(mentioning))
    kept = np.flatnonzero(view.retrievable_segments[mentioning])
    order = kept[np.lexsort((-summed[kept], -best[kept]))][:budget]
    return [(graph.segment_ids[mentioning[i]], round(float(best[i]), 6)) for i in order]


def _normalise(scored: list[tuple[str, float]]) -> dict[str, float]:
    top = max((score for _, score in scored), default=0.0)
    if top <= 0:
        return {segment: 0.0 for segment, _ in scored}
    return {segment: max(score, 0.0) / top for segment, score in scored}
