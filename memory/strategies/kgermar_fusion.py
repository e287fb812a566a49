"""KGERMAR multi-bank retrieval (paper §2.4, eqs. 8–11, Algorithm 2): top candidates from
three memory banks, re-ranked by ``λ1·s_ctx + λ2·s_sem + λ3·s_kg`` with λ1+λ2+λ3 = 1, and
that ranking blended with the flat `hybrid` prior (`memory.traversal.blended`).

Banks, as this offline pipeline can hold them:
- contextual: the paper's layer-13 key/value pairs need the fine-tuned LM, so the
  contextual bank here is lexical: BM25 over the segments' full-text index;
- semantic: dense segment vectors (cosine of the query embedding, eq. 9);
- structural (eq. 10): the query against structural embeddings made by the paper's R-GCN
  (eq. 5) over the LLM-free stand-in for its knowledge graph, the passage graph
  (`memory.passage_rgcn`, run without learned weights). Paper element -> graph element:
  KG entities -> passage nodes (named entities, document topic/title nodes, documents,
  sessions, speakers, days/weeks/months, phrase nodes) and the segments themselves;
  relation types -> one per node kind (segment – node incidence), "mentioned in" (node –
  its segments), turn – next turn, and each typed fact's relation label (entity –
  entity: the typed-fact graph is kept inside the passage graph); text embedding
  e_text -> a segment's text, scored for the query by the flat prior; fused R-GCN + text
  entity vectors -> the snapshot's "structure" table, whose entities nearest the query
  (cosine) seed their nodes. Two layers: segment -> node -> segment, so a passage that
  shares a title, name or session with the query's best passages rises. A segment's
  structural score is the log of the query's product with its embedding after the
  layers, computed by propagating the seeds (the layers are linear:
  `transforms.relational_mean`).

Measured (0 LLM calls), MuSiQue dev (all 100 questions) R@5: 67.3 against `hybrid` 67.5
with linear structural scores max-scaled and the fused list cut at k; 72.8 with log
scores, min-max scaling and `CANDIDATES` (flat share 0.2). The products after two layers
span orders of magnitude (a seed passage keeps its prior mass, a second-hop passage gets
a mean of means), so scaled linearly only the seeds stood above 0 and the second hop,
which the title or name it shares with the first passage reaches, never ranked. LoCoMo
dev (all questions, flat share 0.3) turn R@10 79.0 against `hybrid` 68.2 (76.4 before),
session-unit R@10 93.8 (`hybrid` 94.1).

Choices where the paper is silent or does not fit segments (measured on the LoCoMo dev
split, first 200 questions, turn R@10; `hybrid` 66.2 there):
- the query side of the structural bank: the paper compares one Embed(q) with every
  bank. Here the segments' similarity to the query is the flat prior's distribution
  (softmax of the `hybrid` scores, `memory.flat_prior`): seeded with raw dense cosines,
  which sit in a narrow band, the layers ranked by neighbour count (68.1 against 75.7,
  λ = (0, 0, 1), flat share 0.5). The structure table's entities take `NODE_SHARE` of
  the seed mass (0, 0.05, 0.1, 0.2: 79.1, 79.1, 79.6, 79.6 with the blend); the query's
  named entities and phrase nodes at weight 1 each drowned the segments (53.6);
- budget: the paper takes ⌊K/3⌋ per bank because its banks hold different objects; here
  every bank yields segments, so an equal split would return fewer than K segments. Each
  bank contributes its top K by default; option "bank_budget": "split" restores ⌊K/3⌋
  (at least 1). K is the k first asked (`QueryContext.depth`), as for the flat prior's
  candidates: not the fetch `Memory.query` doubles when k segments fill fewer than k
  passages, which searched 2k entities and gave the widened ask another ranking (and
  another first k) than the first;
- score scales (log mass, BM25 and cosine are not comparable): each bank's scores are
  min-max scaled over its list for the query and one mean gap below it, so every bank's
  top item scores 1, a segment absent from its top list 0 (Algorithm 2, lines 8–10) and
  its last item a gap above that. MuSiQue dev R@5 with log structural scores, flat share
  0.2 / 0.3 (100 candidates): 72.8 / 71.5; 73.0 / 71.5 with the last item at 0 (tied with
  absent segments); 70.7 / 70.2 divided by each bank's best score, the structural bank
  as log(1 + product / its smallest); 65.8 at 0.3 with linear products;
- λ: the paper learns them by gradient descent and gives no initial values; the default
  is the dev fit (`memory.fusion_weights.DEFAULT_WEIGHTS`). λ fitted on a dev split
  (`kgmem train fusion-weights`) are read from `<home>/models/fusion_weights.json` when
  present; option "fusion_weights" overrides both;
- the blend with the prior: the paper has none (it injects its top K into an LM); the
  flat share per corpus kind is `transforms.traversal_blend`'s entry;
- a snapshot without a "structure" table (built before it existed) seeds the structural
  bank with the prior's segments alone, and the explanation says so;
- entities searched in the structure table: option "entity_k", default K.

Options read: "fusion_weights" (three numbers in bank order contextual, semantic,
structural, or a mapping bank -> weight; normalised to sum 1), "bank_budget" ("k" or
"split"), "entity_k" (int), "node_share" (the entities' seed share), "layers" (R-GCN
layers, default 2), "flat_share" (`memory.traversal.blended`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memory.exact_segments import ExactSegments
from memory.flat_prior import flat_prior
from memory.fusion_weights import BANKS, resolve_weights
from memory.graph import MemoryGraph, graph_of
from memory.linking import beside
from memory.passage_rgcn import LAYERS, SPREAD_THRESHOLD, passage_rgcn
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking
from memory.strategies.hybrid import candidate_pool, hybrid_signals, kept_recent
from memory.top import top_positions
from memory.traversal import blended
from transforms.cpu_lanes import on_lane

SHOWN = 5
"""Items per bank listed in the explanation."""
CANDIDATES = 100
"""Segments the structural bank returns at least, and the fused banks hand to the blend
(beside the query's k): cut at k (10 passages on MuSiQue), the blend z-scored ten items
and gave every other segment the floor (MuSiQue dev R@5 65.8 at 100 against 67.3 at k,
both with max-scaled linear scores; 71.5 at 100 with log scores, 71.5 at 50, 70.7 at
200)."""
NODE_SHARE = 0.1
"""The structure table's entities' share of the structural bank's seeds (option
"node_share"), the flat prior's segments holding the rest."""


@dataclass
class Banks:
    """Per-bank top segments of one query: raw and max-normalised scores."""

    raw: dict[str, list[tuple[str, float]]]
    normalised: dict[str, dict[str, float]]
    entities: list[tuple[str, float]] = field(default_factory=list)
    """Structural bank: (entity id, cosine) of the entities searched, best first."""
    missing: list[str] = field(default_factory=list)
    """Tables the snapshot lacks (its structure table), with the reason."""


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
    with start_banks(view, query, budget, entity_k) as finish:
        return finish()


@contextlib.contextmanager
def start_banks(
    view: SnapshotView, query: QueryContext, budget: int, entity_k: int | None = None
) -> Iterator[Callable[[], Banks]]:
    """The structural bank's entity search, started beside the block (the caller computes
    the query's flat prior in it); yields the function that finishes the banks: it takes
    the contextual and semantic banks from the prior's own BM25 and dense lists
    (`hybrid_signals`, top max(`POOL`, 2k) >= `budget`): a search's top `budget` is the
    head of its top pool (both searches are exhaustive top-k scans: no candidate depends
    on the limit), so each bank is the list a search of its own would return, without
    running that search again beside the prior's.

    Where the search is LanceDB's indexed one, it runs on a worker (`beside`: it waits in
    LanceDB's runtime). A table held in memory (`_structure_rows`, at most
    `IN_MEMORY_ROWS`) is multiplied on the query's lane thread while the block runs on
    the caller's alone (`transforms.cpu_lanes.on_lane`): the structure product and the
    prior's segment product are both bound by memory bandwidth, and each on a core of its
    own they take less than each cut in two lanes one after the other (the 25k x 384
    structure product alone: 1.17 ms in two lanes against 0.90 on OpenBLAS's spinning
    pool, the lanes' hand-offs; and no core idles while the prior fuses its lists). At
    100k facts, five rounds alternating with the code before issue 35, `kgermar_fusion`
    went from 1.41 to 1.33 times `dense` (1.36 before the issue). A worker of its own
    beside the lanes, a third thread on two cores, had slowed the prior's searches (p95
    26.7-31.3 ms against 17.7-20.3 at 100k facts). Where the prior is already kept (an
    evaluation's strategies share it), the block is empty and the product runs on one
    core alone: ~0.05 ms more than in two lanes."""
    missing: list[str] = []
    try:
        structure = view.table("structure")
    except LookupError as exc:
        structure = None
        missing.append(f"structural: {exc}")
    vector = view.embed_query(query.text)
    k = entity_k or budget
    in_memory = _structure_rows(view, structure) if structure is not None else None
    with contextlib.ExitStack() as stack:
        if in_memory is not None:
            entities = stack.enter_context(on_lane(in_memory.nearest, vector, k))
        elif structure is not None:
            entities = beside(_structural_entities, structure, vector, k).result
        else:  # no structure table: no entities, the prior's segments seed the bank
            entities = list

        def finish() -> Banks:
            signals = hybrid_signals(view, query)
            raw = {"contextual": signals["bm25"][:budget], "semantic": signals["dense"][:budget]}
            banks = Banks(raw=raw, normalised={}, missing=missing)
            banks.entities = entities()
            raw["structural"] = _structural_segments(view, query, banks, max(budget, CANDIDATES))
            banks.normalised = {name: _normalise(scored) for name, scored in raw.items()}
            return banks

        yield finish


def fuse(banks: Banks, weights: Mapping[str, float], k: int) -> list[tuple[str, float]]:
    """Algorithm 2, lines 6–12: the union of the banks' segments by λ-weighted score."""
    total: dict[str, float] = {}
    for name, scores in banks.normalised.items():
        for segment, score in scores.items():
            total[segment] = total.get(segment, 0.0) + weights.get(name, 0.0) * score
    ranked = sorted(total.items(), key=lambda item: (-item[1], item[0]))
    return [(segment, round(score, 6)) for segment, score in ranked[:k]]


def kgermar_fusion(view: SnapshotView, query: QueryContext) -> Ranking:
    """The fused ranking for the k first asked (`QueryContext.depth`), cut at the query's
    k: the bank budget and the entities searched follow that k, not the fetch
    `Memory.query` widens to fill k passages, so the widened ask reads the ranking kept
    for the query (`kept_recent`) instead of searching 2k entities and running the
    layers again, and its first k hits are the first ask's."""
    depth = query.depth or query.k
    budget = bank_budget(depth, query.options)
    entity_k = int(query.options.get("entity_k", depth))
    key = (
        query.text,
        budget,
        entity_k,
        candidate_pool(query),
        json.dumps(query.options, sort_keys=True, default=str),
        *query.fact_filter,
    )
    fused, explanation = kept_recent(
        view, "kgermar_rankings", key, lambda: _ranked(view, query, depth, budget, entity_k)
    )
    return Ranking([(s, round(score, 6)) for s, score in fused[: query.k]], explanation)


def _ranked(
    view: SnapshotView, query: QueryContext, depth: int, budget: int, entity_k: int
) -> tuple[list[tuple[str, float]], dict[str, Any]]:
    """The banks fused (the first max(`depth`, `CANDIDATES`)) and blended with the flat
    prior, every candidate best first, and the explanation."""
    with start_banks(view, query, budget, entity_k) as finish:
        prior = flat_prior(view, query)
    banks = finish()
    weights, source = resolve_weights(view, query.options)
    used = {b: round(weights[b], 6) for b in BANKS}
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
                ("structural", "R-GCN structural embeddings over the passage graph"),
            )
            if name in banks.raw
        },
        "structural_entities": [[_name(graph, e), round(s, 4)] for e, s in banks.entities],
        "model": view.snapshot.embedding_model,
    }
    if banks.missing:
        explanation["missing_tables"] = banks.missing
        explanation["note"] = (
            "snapshot has no structure table; the structural bank is seeded by the flat "
            "prior's segments alone"
        )
    explanation["flat"] = prior.summary()
    own = fuse(banks, used, max(depth, CANDIDATES))
    explanation["fused_banks"] = [[s, round(score, 4)] for s, score in own[:SHOWN]]
    fused, shares = blended(view, query, prior, own, "kgermar_fusion")
    explanation["flat_share"] = shares
    return fused, explanation


def _name(graph: MemoryGraph, entity: str) -> str:
    """An entity's name (its id where the snapshot's entities lack it), looked up through
    the graph's cached positions rather than a per-query map of every entity."""
    position = graph.entity_position.get(entity)
    return entity if position is None else graph.entity_names[position]


IN_MEMORY_ROWS = 50_000
"""Structure tables of at most this many rows are searched in memory (`_structure_rows`).
A table this small has no vector index (LanceDB indexes the larger ones), so LanceDB
scans every row from its files at each query: 65-99 ms of CPU a search over the 25k
entities of the 100k-fact bench, against ~3 ms for the product of the rows held in
memory (38 MB there). Larger tables keep LanceDB's index, whose search costs ~5 ms."""


def _structure_rows(view: SnapshotView, table: Any) -> ExactSegments | None:
    """The structure table's entity ids and vectors in memory, for exact searches as
    LanceDB's (`memory.exact_segments`, ties by row, cosine 1 - d/2), when it has at most
    `IN_MEMORY_ROWS`; read once per view."""
    key = "kgermar_structure_rows"
    if key not in view.cache:
        rows = None
        if table.count_rows() <= IN_MEMORY_ROWS:
            data = table.to_arrow().select(["entity_id", "vector"])
            column = data.column("vector").combine_chunks()
            width = column.type.list_size  # fixed: an empty table reshapes too
            vectors = np.asarray(column.flatten(), np.float32).reshape(len(column), width)
            rows = ExactSegments.of(data.column("entity_id").to_pylist(), vectors, None)
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


def _structural_segments(
    view: SnapshotView, query: QueryContext, banks: Banks, budget: int
) -> list[tuple[str, float]]:
    """The structural bank's top `budget` retrievable segments (score > 0): the query's
    product with the segments' structural embeddings over the passage graph
    (`memory.passage_rgcn`), from the flat prior's distribution over its candidates
    (mass 1 - node share) and the structure table's nearest entities by cosine (the node
    share, option "node_share"), each part normalised to its mass."""
    rgcn = passage_rgcn(view, query)
    distribution = flat_prior(view, query).distribution()
    segments = np.fromiter(map(view.segment_index.__getitem__, distribution), np.int64)
    nodes: dict[int, float] = {}
    entity_node = view.graph_index.entity_node
    for entity, score in banks.entities:
        position = view.node_names.entity_position.get(entity)
        if position is not None and entity_node[position] >= 0 and score > 0:
            node = rgcn.n_segments + int(entity_node[position])
            nodes[node] = max(nodes.get(node, 0.0), score)
    share = float(query.options.get("node_share", NODE_SHARE)) if nodes else 0.0
    positions, values = _seeds(
        [
            (segments, list(distribution.values()), 1.0 - share),
            (np.fromiter(nodes, np.int64, len(nodes)), list(nodes.values()), share),
        ]
    )
    if not len(positions):
        return []
    layers = int(query.options.get("layers", LAYERS))
    threshold = float(query.options.get("spread_threshold", SPREAD_THRESHOLD))
    reached, scores = rgcn.propagate(positions, values, layers, threshold)
    kept = view.retrievable_segments[reached] & (scores > 0)
    reached, scores = reached[kept], scores[kept]
    top = top_positions(scores, budget)
    ids = view.node_names.segment_ids
    logs = np.log(scores[top]).tolist()  # one pass: the same bits as per entry
    return [(ids[p], round(v, 9)) for p, v in zip(reached[top].tolist(), logs, strict=True)]


def _seeds(
    parts: list[tuple[np.ndarray, list[float], float]],
) -> tuple[np.ndarray, np.ndarray]:
    """The structural bank's seeds: each part's (positions, values) normalised to its mass
    (each value times the mass over the part's sum, summed left to right), the positive
    ones, part after part. The parts' positions are distinct (segments, then nodes)."""
    positions, values = [], []
    for where, part, mass in parts:
        if mass <= 0 or not part:
            continue
        scaled = mass * np.asarray(part, np.float64) / sum(part)
        kept = np.asarray(part, np.float64) > 0
        positions.append(where[kept])
        values.append(scaled[kept])
    if not positions:
        return np.zeros(0, np.int64), np.zeros(0)
    return np.concatenate(positions), np.concatenate(values)


def _normalise(scored: list[tuple[str, float]]) -> dict[str, float]:
    """A bank's scores min-max scaled over its list and one step below it: its top item
    1, a segment it did not return 0, its last item the list's mean gap above that;
    equal scores all 1."""
    if not scored:
        return {}
    values = [score for _, score in scored]
    low, top = min(values), max(values)
    if top <= low:
        return {segment: 1.0 for segment, _ in scored}
    gap = (top - low) / max(len(values) - 1, 1)
    return {segment: (score - low + gap) / (top - low + gap) for segment, score in scored}
