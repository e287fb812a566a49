"""The graph REAL's beams walk for one query, and its three cascading filters (§III-B2.I).

The search runs on the snapshot's graph of *all* fact versions known at the snapshot
(`graph_of` with no valid time, speculative), so that counterfactual repair can see what
the filters turned away; each frontier edge is then checked against the query's
coordinates with the semantics of `memory.facts` (the SQL behind `view.facts(query)`):

1. TimeValid: valid_from ≤ τ_q < valid_to (open ends unbounded). τ_q is the query's
   `valid_at`; without one the paper defaults to "the current dialogue time", here the
   snapshot's recorded cutoff (the memory's now, fixed per snapshot so that a query keeps
   its answer), so closed versions are invisible by default.
2. Stability: confidence ≥ θ_stable (0.8), unless the query is speculative.
3. IntentCompatible(label of the fact, the beam's intent) (`intents.COMPATIBLE`).

Survivors are N_raw; TopM keeps the m best by Sim(q, r ⊕ u). That cosine is taken on the
fact's stored statement embedding (`head relation tail`): the head is the beam's current
entity for every candidate of one expansion, so it ranks them as r ⊕ u would without an
encoder call per neighbour. Edges are followed in both directions (the paper does not say;
"Harborview Office is located in Rotterdam" must be walkable from either end) and a path
never visits an entity twice. Only edges of the current frontier are ever looked at.

An entity's edges are read once (`EntityEdges`: the filters that hold whatever the beam,
each fact's intent label; kept across a view's queries of one reference time,
`EntityMemo`), and a path's candidates are then filtered and TopM-ranked as arrays; a hop
object is built for the m kept only. A hub of degree thousands is the end of many beams
and repairs, and a Python object per edge per visit made it 17x a dense search at a
million facts. The candidates' statement vectors are read from the index's
`search_edge_vectors` where it has them (an entity's edges as one block of rows, the same
values as the fact matrix's scattered rows), so the products TopM ranks by, and every
ranking, are those of the fact matrix's rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from memory.csr import row_entries
from memory.fact_columns import EPOCH, FactRows
from memory.graph import Edge, MemoryGraph, search_edge_vectors, search_graph
from memory.passage_links import PassageLinks
from memory.real.intents import COMPATIBLE, FACT, INTENTS, compatible, fact_intent, is_taxonomic
from memory.real.links import (
    MENTIONED_WITH,
    NEXT_TURN,
    LinkCandidates,
    LinkTable,
    link_candidates,
    link_table,
    no_candidates,
    node_segments,
)
from memory.real.paths import Hop, Path
from memory.snapshot_view import QueryContext, SnapshotView
from memory.top import top_positions
from transforms.facts import THETA_STABLE
from transforms.graph_links import linearize
from transforms.mapped_rows import populate, read_rows

TIME, STABILITY, INTENT = "time", "stability", "intent"
INTENT_INDEX = {intent: i for i, intent in enumerate(INTENTS)}


def entity_features(view: SnapshotView) -> tuple[list[str], np.ndarray]:
    """Entity types and normalised description vectors, in `view.entities` order (the
    graph's entity positions); built once per view. Mapped vectors are mapped whole at
    once (`populate`): the co-occurrence repair gathers ~6.5k scattered rows a query at
    1M facts and leaves them mapped (`SearchSpace.co_occurring`), which faulted in row by
    row cost ~15 ms a query until most of the 384 MB were mapped anyway; mapping them in
    one call took 15 ms once (page cache warm)."""
    if "real_entity_features" not in view.cache:
        types = view.entities.column("entity_type").to_pylist()
        vectors = view.entity_unit_vectors if types else np.zeros((0, 0), np.float32)
        populate(vectors)
        view.cache["real_entity_features"] = (types, vectors)
    return view.cache["real_entity_features"]


def time_valid(fact: dict[str, Any], at: datetime) -> bool:
    """valid_from ≤ at < valid_to, an unknown start or open end being unbounded."""
    start, end = fact["valid_from"], fact["valid_to"]
    return (start is None or start <= at) and (end is None or end > at)


@dataclass(frozen=True)
class EntityEdges:
    """The facts touching one entity as arrays, in `MemoryGraph.edges` order, with what
    the filters say of them independently of the beam: each fact's far end and direction,
    whether it fails the time and the stability filter (read with a FACT beam, which
    every label suits), and its intent label (an index into `INTENTS`)."""

    facts: np.ndarray
    others: np.ndarray
    outgoing: np.ndarray
    time_failed: np.ndarray
    stability_failed: np.ndarray
    labels: np.ndarray
    taxonomic: np.ndarray
    """Per edge, whether its fact's relation is taxonomic (`intents.is_taxonomic`)."""

    def intent_failed(self, intent: str) -> np.ndarray:
        """Per edge, whether a beam of `intent` may not traverse its fact's label."""
        return INTENT_FAILED[intent][self.labels]

    def open(self, path: Path) -> np.ndarray:
        """Per edge, whether it leads to an entity the path has not visited."""
        return unvisited(self.others, path)


INTENT_FAILED = {
    intent: ~np.array([label in COMPATIBLE[intent] for label in INTENTS]) for intent in INTENTS
}
"""Per beam intent, per label index, whether the label is incompatible with the intent."""


_NONE = np.zeros(0, np.int64)
NO_EDGES = EntityEdges(
    _NONE, _NONE, _NONE.astype(bool), *(_NONE.astype(bool),) * 2, _NONE, _NONE.astype(bool)
)
"""The typed edges of a beam node that is no entity (a topic, phrase or structural node)."""


def unvisited(entities: np.ndarray, path: Path) -> np.ndarray:
    """Per entity, whether the path does not visit it: `~np.isin(entities, path.entities)`
    as one comparison per path entity (at most D_max + 1), without `isin`'s sort and
    dispatch (~40 us a call, thousands of calls a query)."""
    visited = path.entities
    kept = entities != visited[0]
    for entity in visited[1:]:
        kept &= entities != entity
    return kept


ENTITY_MEMO = 1 << 20
"""Items (edges, co-occurring entities) an `EntityMemo` keeps over all its entities: at
most ~1M edges' arrays (~30 MB) or 8 MB of co-occurring entity positions. On the 1M-fact
benchmark's queries few entities recur (the memo saved little there); a conversation's
queries about the same people do recur."""


class EntityMemo:
    """Per entity, what REAL computes of it that no query changes, kept across the
    queries of a view (`SearchSpace.of` takes one from the view's cache): an entity's
    `EntityEdges` under one (reference time, speculative) pair, and its co-occurring
    entities (`SearchSpace.co_occurring`, a function of the search graph, every fact
    version whatever the query, and of the entity vectors). Hubs end beams query after
    query; at 1M facts finding their co-occurring lists took ~15 ms a query and their
    edges' filters ~6 ms. Emptied when it holds over `ENTITY_MEMO` items in all, so
    memory stays bounded."""

    def __init__(self) -> None:
        self._known: dict[int, Any] = {}
        self._size = 0

    def get(self, entity: int) -> Any:
        return self._known.get(entity)

    def put(self, entity: int, value: Any, size: int) -> None:
        """Keep `value` for `entity`, counted as `size` items."""
        if self._size + size > ENTITY_MEMO:
            self._known.clear()
            self._size = 0
        self._known[entity] = value
        self._size += size


@dataclass
class SearchSpace:
    """One query's view of the search graph: filters, pre-ranking and hop construction."""

    graph: MemoryGraph
    query_vector: np.ndarray
    reference_time: datetime
    speculative: bool
    m: int
    entity_types: list[str]
    entity_vectors: np.ndarray
    theta_stable: float = THETA_STABLE
    _edges: EntityMemo = field(default_factory=EntityMemo, repr=False)
    """`EntityEdges` by entity, shared by the view's queries of the same coordinates."""
    _co_occurring: dict[int, tuple[np.ndarray, np.ndarray]] = field(
        default_factory=dict, repr=False
    )
    edge_vectors: np.ndarray | None = None
    """The index's `search_edge_vectors` when it has them for this graph (each entity's
    edge vectors as one block of rows, in `edge_arrays` order); None: rows are gathered
    from `graph.fact_vectors`."""
    _edge_blocks: dict[int, np.ndarray] = field(default_factory=dict, repr=False)
    """Per entity, its whole block of `edge_vectors` rows, read once a query
    (`edge_rows`)."""
    co_occurring_targets: EntityMemo = field(default_factory=EntityMemo, repr=False)
    """The query-independent part of `co_occurring`, shared by the queries of one view."""
    links: PassageLinks | None = None
    """The passage links beams also walk (`memory.real.links`); None: typed facts only."""
    focus: np.ndarray | None = None
    """Per segment, whether a hub node's untyped links may leave through it (the flat
    prior's pool); None: a hub has no untyped links."""
    link_tables: EntityMemo = field(default_factory=EntityMemo, repr=False)
    """Linkable passage nodes' `LinkTable`s, shared by the queries of one view: ~1,500
    link candidate lists a query at 100k facts built each from the passage graph's
    arrays (~25 NumPy calls), where the path's exclusions are three comparisons."""

    @classmethod
    def of(
        cls,
        view: SnapshotView,
        query: QueryContext,
        m: int,
        links: PassageLinks | None = None,
        focus: np.ndarray | None = None,
    ) -> SearchSpace:
        """The query's search space; with `links`, beams also take untyped links."""
        types, vectors = entity_features(view)
        graph = search_graph(view, query)
        reference_time = query.valid_at or view.snapshot.recorded_cutoff
        return cls(
            graph=graph,
            query_vector=view.embed_query(query.text),
            reference_time=reference_time,
            speculative=query.speculative,
            m=m,
            entity_types=types,
            entity_vectors=vectors,
            edge_vectors=search_edge_vectors(view, graph),
            _edges=view.cache.setdefault(
                f"real_edges/{reference_time.isoformat()}/{query.speculative}", EntityMemo()
            ),
            co_occurring_targets=view.cache.setdefault("real_co_occurring_targets", EntityMemo()),
            link_tables=view.cache.setdefault("real_link_tables", EntityMemo()),
            links=links,
            focus=focus,
        )

    def node_of(self, node: int) -> int:
        """The passage node position of a beam node (-1: an entity no segment names)."""
        n = self.graph.n_entities
        return int(self.links.entity_node[node]) if node < n else node - n

    def beam_node(self, passage_node: int) -> int:
        """The beam node of a passage node: its entity position, else n_entities + it."""
        entity = int(self.links.node_entity[passage_node])
        return entity if entity >= 0 else self.graph.n_entities + passage_node

    def node_name(self, node: int) -> str:
        """A beam node's name: the entity's, else the passage node's id."""
        n = self.graph.n_entities
        return self.graph.entity_names[node] if node < n else self.links.node_ids[node - n]

    def node_type(self, node: int) -> str | None:
        """A beam node's entity type (None for a structural or phrase node)."""
        return self.entity_types[node] if node < self.graph.n_entities else None

    def link_candidates(self, path: Path) -> LinkCandidates:
        """The untyped neighbours of the path's end (`memory.real.links`)."""
        dim = len(self.query_vector)
        node = self.node_of(path.end) if self.links is not None else -1
        if node < 0:
            return no_candidates(dim)
        on_path = np.array([self.node_of(e) for e in path.entities], np.int64)
        used = np.array([s for hop in path.hops for s in hop.segments], np.int64)
        return link_candidates(self.links, self.link_table(node), on_path, used, self.query_vector)

    def link_table(self, node: int) -> LinkTable:
        """The passage node's `LinkTable`: a linkable node's is kept across the view's
        queries (`link_tables`); a hub's is built from the query's focus segments."""
        if not self.links.linkable[node]:
            return link_table(self.links, node_segments(self.links, node, self.focus))
        known = self.link_tables.get(node)
        if known is None:
            known = link_table(self.links, node_segments(self.links, node, self.focus))
            self.link_tables.put(node, known, known.size)
        return known

    def link_hop(self, path: Path, candidates: LinkCandidates, i: int) -> Hop:
        """The untyped hop of candidate row `i`: `mentioned_with` through one segment, or
        `next_turn` through two; its weight the geometric mean of the ends'
        specificities."""
        links = self.links
        via, reached = int(candidates.via[i]), int(candidates.reached[i])
        target = int(candidates.targets[i])
        source_name, beam_target = self.node_name(path.end), self.beam_node(target)
        target_name = self.node_name(beam_target)
        relation = MENTIONED_WITH if via == reached else NEXT_TURN
        weight = links.specificity[self.node_of(path.end)] * links.specificity[target]
        return Hop(
            fact=None,
            source=path.end,
            target=beam_target,
            relation=relation,
            target_name=target_name,
            text=linearize(source_name, relation, target_name),
            confidence=float(np.sqrt(weight)),
            target_type=self.node_type(beam_target),
            vector=candidates.vectors[i],
            segments=(via,) if via == reached else (via, reached),
        )

    def label(self, fact: int) -> str:
        f = self.graph.facts[fact]
        return fact_intent(f["relation"], f["cardinality"], f["valid_to"] is not None)

    def failed_filters(self, fact: int, intent: str, label: str | None = None) -> frozenset[str]:
        """The filters the fact does not pass for a beam of `intent` (empty: it passes);
        `label` is the fact's, when the caller has it."""
        f = self.graph.facts[fact]
        failed = set()
        if not time_valid(f, self.reference_time):
            failed.add(TIME)
        if not (self.speculative or float(f["confidence"]) >= self.theta_stable):
            failed.add(STABILITY)
        if not compatible(intent, label or self.label(fact)):
            failed.add(INTENT)
        return frozenset(failed)

    def edges_of(self, entity: int) -> EntityEdges:
        """The entity's edges with their beam-independent filter results, read once."""
        if entity >= self.graph.n_entities:
            return NO_EDGES
        known = self._edges.get(entity)
        if known is not None:
            return known
        facts, others, outgoing = self.graph.edge_arrays(entity)
        filters = _column_filters(self, facts)
        if filters is None:
            filters = self._row_filters(facts)
        known = EntityEdges(facts, others, outgoing, *filters)
        self._edges.put(entity, known, len(facts))
        return known

    def _row_filters(
        self, facts: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`EntityEdges`' filter columns read fact row by fact row (`failed_filters`), for
        a graph whose facts are no column selection (`_column_filters`)."""
        time_failed, stability_failed, labels, taxonomic = [], [], [], []
        for fact in facts.tolist():
            label = self.label(fact)
            failed = self.failed_filters(fact, FACT, label)
            time_failed.append(TIME in failed)
            stability_failed.append(STABILITY in failed)
            labels.append(INTENT_INDEX[label])
            taxonomic.append(is_taxonomic(self.graph.facts[fact]["relation"]))
        return (
            np.array(time_failed, bool),
            np.array(stability_failed, bool),
            np.array(labels, np.int64),
            np.array(taxonomic, bool),
        )

    def co_occurring(self, entity: int) -> tuple[np.ndarray, np.ndarray]:
        """Entities sharing a segment with `entity`, linked to it by no fact and with a
        description vector (not all zero), in the order the segment product gives, and
        their vectors (rows of `entity_vectors`); read once a query, as the co-occurrence
        repair of every path ending at the entity ranks these. Only these rows are read,
        where a pass over every entity vector once per view, to know which are all zero,
        cost a second of the first query at 1M facts. They are read through the mapping
        and left mapped (not under `transforms.mapped_rows`' budget): the matrix is
        bounded (384 MB at 250k entities) and the co-occurring rows of hubs are read
        again query after query."""
        known = self._co_occurring.get(entity)
        if known is not None:
            return known
        if not len(self.entity_vectors) or entity >= self.graph.n_entities:
            known = (np.zeros(0, np.int64), np.zeros((0, 0), np.float32))
        else:
            targets = self.co_occurring_targets.get(entity)
            if targets is not None:
                known = (targets, np.asarray(self.entity_vectors[targets]))
            else:
                targets = segment_product_order(self.graph, entity)
                linked = np.zeros(self.graph.n_entities, bool)
                linked[self.edges_of(entity).others] = True
                linked[entity] = True
                targets = targets[~linked[targets]]
                rows = np.asarray(self.entity_vectors[targets])
                described = rows.any(axis=1)
                known = (targets[described], rows[described])
                self.co_occurring_targets.put(entity, known[0], len(known[0]))
        self._co_occurring[entity] = known
        return known

    def open_edges(self, path: Path) -> list[Edge]:
        """Edges of the path's end entity that lead to an entity the path has not visited."""
        return [e for e in self.graph.edges(path.end) if not path.visits(e.other)]

    def fact_hop(
        self, path: Path, edge: Edge, repair: str | None = None, vector: np.ndarray | None = None
    ) -> Hop:
        """The hop along `edge` (`vector`: its fact's statement vector, when the caller has
        read it for TopM; else read here). The confidence is the graph's in-memory
        `fact_confidence` (the fact column's values as float64, what `float` of the row's
        field gives): the row's field is read from the mapped fact table, a page fault
        for nearly every hop, ~20 ms a query at 1M facts."""
        f = self.graph.facts[edge.fact]
        return Hop(
            fact=edge.fact,
            source=path.end,
            target=edge.other,
            relation=f["relation"],
            target_name=self.graph.entity_names[edge.other],
            text=self.graph.linearized(edge.fact),
            confidence=float(self.graph.fact_confidence[edge.fact]),
            outgoing=edge.outgoing,
            target_type=self.entity_types[edge.other],
            valid_from=f["valid_from"],
            valid_to=f["valid_to"],
            repair=repair,
            vector=self.graph.fact_vectors[edge.fact] if vector is None else vector,
        )

    def top_m(self, path: Path, hops: list[Hop]) -> list[Path]:
        """The m hops most similar to the query (TopM), as extensions of `path`."""
        if not hops:
            return []
        order = self.best(np.stack([hop.vector for hop in hops]))
        return [path.extend(hops[i]) for i in order]

    def best(self, vectors: np.ndarray) -> list[int]:
        """TopM: the rows of the most similar `vectors` to the query, best first (ties in
        row order): `np.argsort(-similarity, kind="stable")[:m]`, without sorting a hub's
        thousands of rows (`top_positions`)."""
        similarity = vectors @ self.query_vector
        return top_positions(similarity, self.m).tolist()

    def edge_rows(self, entity: int, at: np.ndarray) -> np.ndarray:
        """The statement vectors of edges `at` (positions among `edges_of(entity)`), as
        `fact_vectors` of their facts gives them: read from the entity's block of
        `edge_vectors` when the index has it (the same float32 rows, so products and
        ranks are the same), else gathered from the fact matrix. The block is read whole,
        once a query: a beam's expansion and its repair read rows of the same end (those
        the filters pass, then those one filter turned away: most of its edges between
        them), and ~20% of the ends recur (at 100k facts `read_rows` ran ~128 times a query,
        now ~57)."""
        if self.edge_vectors is None or not len(at):
            return self.fact_vectors(self.edges_of(entity).facts[at])
        block = self._edge_blocks.get(entity)
        if block is None:
            first = int(self.graph.entity_facts.indptr[entity])
            rows = first + np.arange(len(self.edges_of(entity).facts))
            block = read_rows(np.asarray(self.edge_vectors), rows)  # no memmap wrapping
            self._edge_blocks[entity] = block
        return block[np.asarray(at, np.int64)]

    def fact_vectors(self, facts: np.ndarray) -> np.ndarray:
        """The facts' statement vectors stacked in order (the rows `np.stack` of the hops'
        vectors gives, so products and ranks are the same)."""
        vectors = self.graph.fact_vectors
        if len(facts):
            return np.asarray(vectors[facts])
        return np.zeros((0, self.query_vector.shape[0]), np.asarray(vectors[:0]).dtype)

    def expand(self, path: Path) -> list[Path]:
        """N_cand: the filtered neighbours of the path's end, typed facts then untyped
        links, TopM by similarity together."""
        edges = self.edges_of(path.end)
        passing = (
            edges.open(path)
            & ~edges.time_failed
            & ~edges.stability_failed
            & ~edges.intent_failed(path.intent)
        )
        at = np.flatnonzero(passing)
        untyped = self.link_candidates(path)
        if not len(at) and not len(untyped):
            return []
        typed = self.edge_rows(path.end, at) if len(at) else None
        vectors = _stacked(typed, untyped.vectors)
        return [
            path.extend(
                self.fact_hop(path, edge_at(edges, int(at[i])), vector=vectors[i])
                if i < len(at)
                else self.link_hop(path, untyped, i - len(at))
            )
            for i in self.best(vectors)
        ]


def _stacked(typed: np.ndarray | None, untyped: np.ndarray) -> np.ndarray:
    """The typed edges' vectors, then the untyped links' (either may be absent)."""
    if typed is None:
        return untyped
    if not len(untyped):
        return typed
    return np.concatenate([typed, untyped.astype(typed.dtype)])


def _column_filters(
    space: SearchSpace, facts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """`SearchSpace._row_filters` of the facts `facts`, read as arrays from the fact
    columns the graph selects (None where its facts are no such selection or a column
    is not of the kind read here): TimeValid and stability as comparisons of whole
    columns, and the intent label and taxonomy of each distinct (relation, cardinality,
    closed) of the edges, computed once by `fact_intent` and `is_taxonomic`. Confidences
    are the graph's in-memory `fact_confidence` (see `SearchSpace.fact_hop`)."""
    rows, at = space.graph.facts, space.reference_time
    if not isinstance(rows, FactRows) or at.tzinfo is None:
        return None
    columns = rows.columns
    relation, cardinality = columns.codes("relation"), columns.codes("cardinality")
    start, end = columns.micros("valid_from"), columns.micros("valid_to")
    confidence = columns.numbers("confidence")
    if relation is None or cardinality is None or start is None or end is None:
        return None
    if confidence is None:
        return None
    positions = rows.positions(facts)
    now = (at - EPOCH) // timedelta(microseconds=1)
    started = ~start[0][positions] | (start[1][positions] <= now)
    closed = end[0][positions]
    time_failed = ~(started & (~closed | (end[1][positions] > now)))
    stable = space.graph.fact_confidence[facts] >= space.theta_stable
    stability_failed = np.zeros(len(facts), bool) if space.speculative else ~stable
    relations, cardinalities = relation[0], cardinality[0]
    relation_codes = relation[1][positions]
    combination = (relation_codes * len(cardinalities) + cardinality[1][positions]) * 2 + closed
    distinct, inverse = np.unique(combination, return_inverse=True)
    labels, taxonomic = np.zeros(len(distinct), np.int64), np.zeros(len(distinct), bool)
    for i, key in enumerate(distinct.tolist()):
        name = relations[key // 2 // len(cardinalities)]
        kind = cardinalities[key // 2 % len(cardinalities)]
        labels[i] = INTENT_INDEX[fact_intent(name, kind, bool(key % 2))]
        taxonomic[i] = is_taxonomic(name)
    return time_failed, stability_failed, labels[inverse], taxonomic[inverse]


def segment_product_order(graph: MemoryGraph, entity: int) -> np.ndarray:
    """The entities the segments mentioning `entity` mention (itself included), in the
    order of the indices of scipy's product `entity_segments[entity] @ mentions`, without
    the product: scipy's CSR product (`csr_matmat`) lists a row's columns last first
    reached first, rows of `mentions` read in the order of the entity's segments (all
    products are positive: no entry is dropped). The order is TopM's tie-break between
    co-occurring entities of equal similarity; scipy's validation and two matrix
    constructions per call cost ~0.3 ms, ~10 ms a query at 1M facts."""
    mentioned = graph.entity_segments
    segments = mentioned.indices[mentioned.indptr[entity] : mentioned.indptr[entity + 1]]
    columns = row_entries(graph.mentions, np.asarray(segments, np.int64))[0]
    distinct, first = np.unique(columns, return_index=True)
    return np.asarray(distinct[np.argsort(first)][::-1], np.int64)


def edge_at(edges: EntityEdges, i: int) -> Edge:
    """Edge `i` of an entity's edges as an `Edge`."""
    return Edge(int(edges.facts[i]), int(edges.others[i]), bool(edges.outgoing[i]))
