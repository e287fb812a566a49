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

Before each depth of a query's searches, `prepare` reads for all the beams' ends at once
what no earlier query read (each read alone cost mostly fixed NumPy costs, ~45 new ends
a query at 100k facts): their edges and filters, per beam intent the edges that pass
(`EntityEdges.passing`), their link tables, their co-occurring entities (gathered into a
buffer with room before them for the end's rule edges, so a repair's matrix of both is a
view) and their edge vector blocks. TopM still multiplies each beam's own matrix (BLAS's
products of one row differ in their last bits with the rows around it, so every ranking
is that of the same matrix as before); hops are kept per query (`_hops`) and a fact's
fields per view (`fact_fields`), its linearization read when a hop is printed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from memory.csr import ranges, row_entries
from memory.fact_columns import EPOCH, FactRows
from memory.graph import Edge, MemoryGraph, search_edge_vectors, search_graph
from memory.passage_links import PassageLinks
from memory.real.intents import COMPATIBLE, FACT, INTENTS, compatible, fact_intent, is_taxonomic
from memory.real.links import (
    MENTIONED_WITH,
    NEXT_TURN,
    LinkCandidates,
    LinkTable,
    evidence_vectors,
    kept_links,
    link_table,
    link_tables,
    link_walk,
    no_candidates,
    node_segments,
)
from memory.real.paths import Hop, Path, new_hop
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
    memo: dict[Any, Any] = field(default_factory=dict, compare=False, repr=False)
    """What searches derive of these arrays per beam intent (`passing`, and the
    repairer's rule edges), computed once: the filters of one (entity, intent) are the same
    for every path that ends at the entity."""

    def intent_failed(self, intent: str) -> np.ndarray:
        """Per edge, whether a beam of `intent` may not traverse its fact's label."""
        return INTENT_FAILED[intent][self.labels]

    def passing(self, intent: str) -> tuple[np.ndarray, np.ndarray]:
        """(positions of the edges that pass the time, stability and intent filters for a
        beam of `intent`, in edge order; their far ends): N_raw before a path's visits."""
        known = self.memo.get(intent)
        if known is None:
            at = np.flatnonzero(
                ~self.time_failed & ~self.stability_failed & ~self.intent_failed(intent)
            )
            known = self.memo[intent] = (at, self.others[at])
        return known

    def open(self, path: Path) -> np.ndarray:
        """Per edge, whether it leads to an entity the path has not visited."""
        return unvisited(self.others, path)


INTENT_FAILED = {
    intent: ~np.array([label in COMPATIBLE[intent] for label in INTENTS]) for intent in INTENTS
}
"""Per beam intent, per label index, whether the label is incompatible with the intent."""
INTENT_FAILED_TABLE = np.array([INTENT_FAILED[intent] for intent in INTENTS])
"""`INTENT_FAILED` as a matrix: beam intent index x label index."""


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
        self.get: Callable[[int], Any] = self._known.get
        """The value kept for an entity, else None (the dict's own `get`: read ~700
        times a query; `put` empties the same dict)."""

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
    fact_fields: dict[int, tuple[Any, ...]] = field(default_factory=dict, repr=False)
    """Per fact of the search graph, what its hops read (relation, confidence,
    valid_from, valid_to), shared by the queries of one view (`FACT_FIELDS` at most):
    read from the fact columns once, not per hop. A hop's linearization (the head and
    tail names) is read when the hop is printed (`paths.new_hop`'s `text_of`)."""
    _hops: dict[tuple[Any, ...], Hop] = field(default_factory=dict, repr=False)
    """The query's hops by (beam node, edge, template): a hop is a function of where it
    leaves from and what it follows, whichever path takes it, and ~20% of a query's
    candidates leave an end another path reached."""
    _co_buffers: dict[int, tuple[np.ndarray, int, np.ndarray]] = field(
        default_factory=dict, repr=False
    )
    """Per entity whose co-occurring vectors the query read (`co_occurring`), the buffer
    they lie at the end of and the rows free before them: room for the entity's rule
    edges' rows, so a repair's matrix of both (`stacked_before`) is a view, not a copy
    of a hub's thousands of rows."""
    _hub_tables: dict[int, LinkTable] = field(default_factory=dict, repr=False)
    """The query's `LinkTable`s of hub nodes (built from its `focus`)."""
    _link_lists: tuple[list[int], list[float], list[int]] | None = None
    """The passage links' `entity_node`, `specificity` and `node_entity` as Python lists
    (per view)."""

    def __post_init__(self) -> None:
        self._n = self.graph.n_entities
        """The graph's entity count: beam nodes below it are entities (read per hop)."""

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
            fact_fields=view.cache.setdefault("real_fact_fields", {}),
            links=links,
            focus=focus,
            _link_lists=_link_lists(view, links) if links is not None else None,
        )

    def node_of(self, node: int) -> int:
        """The passage node position of a beam node (-1: an entity no segment names)."""
        n = self._n
        return int(self.links.entity_node[node]) if node < n else node - n

    def beam_node(self, passage_node: int) -> int:
        """The beam node of a passage node: its entity position, else n_entities + it."""
        entity = int(self.links.node_entity[passage_node])
        return entity if entity >= 0 else self._n + passage_node

    def node_name(self, node: int) -> str:
        """A beam node's name: the entity's, else the passage node's id."""
        n = self._n
        return self.graph.entity_names[node] if node < n else self.links.node_ids[node - n]

    def node_type(self, node: int) -> str | None:
        """A beam node's entity type (None for a structural or phrase node)."""
        return self.entity_types[node] if node < self._n else None

    def link_candidates(self, path: Path) -> LinkCandidates:
        """The untyped neighbours of the path's end (`memory.real.links`)."""
        walked = self._walk(path)
        if walked is None:
            return no_candidates(len(self.query_vector))
        via, reached, nodes = walked
        vectors = evidence_vectors(self.links, via, reached, len(self.query_vector))
        return kept_links(via, reached, nodes, vectors, self.query_vector)

    def _walk(self, path: Path) -> tuple[list[int], list[int], list[int]] | None:
        """`links.link_walk` of the path's end (None: no untyped neighbour)."""
        if self.links is None:
            return None
        entity_node = self._lists()[0]
        n = self._n
        end = path.end
        node = entity_node[end] if end < n else end - n
        if node < 0:
            return None
        on_path = [entity_node[e] if e < n else e - n for e in path.entities]
        used = [s for hop in path.hops for s in hop.segments]
        walked = link_walk(self.link_table(node), on_path, used, node)
        return walked if walked[2] else None

    def _lists(self) -> tuple[list[int], list[float], list[int]]:
        if self._link_lists is None:
            self._link_lists = _link_lists_of(self.links)
        return self._link_lists

    def link_table(self, node: int) -> LinkTable:
        """The passage node's `LinkTable`: a linkable node's is kept across the view's
        queries (`link_tables`); a hub's is built from the query's focus segments (and
        kept for the query, `_hub_tables`)."""
        if not self.links.linkable[node]:
            known = self._hub_tables.get(node)
            if known is None:
                segments = node_segments(self.links, node, self.focus)
                known = self._hub_tables[node] = link_table(self.links, segments)
            return known
        known = self.link_tables.get(node)
        if known is None:
            known = link_table(self.links, node_segments(self.links, node, self.focus))
            self.link_tables.put(node, known, known.size)
        return known

    def link_hop(self, path: Path, candidates: LinkCandidates, i: int) -> Hop:
        """The untyped hop of candidate row `i`: `mentioned_with` through one segment, or
        `next_turn` through two; its weight the geometric mean of the ends'
        specificities."""
        via, reached = int(candidates.via[i]), int(candidates.reached[i])
        target = int(candidates.targets[i])
        end = path.end
        relation = MENTIONED_WITH if via == reached else NEXT_TURN
        key = (end, via, reached, target, relation)
        known = self._hops.get(key)
        if known is not None:
            return known
        entity_node, specificity, node_entity = self._lists()
        n, names, ids = self._n, self.graph.entity_names, self.links.node_ids
        entity = node_entity[target]  # the beam node reached: `beam_node(target)`
        beam_target = entity if entity >= 0 else n + target
        source_name = names[end] if end < n else ids[end - n]
        target_name = names[beam_target] if beam_target < n else ids[target]
        weight = specificity[entity_node[end] if end < n else end - n] * specificity[target]
        known = self._hops[key] = new_hop(
            None,
            end,
            beam_target,
            relation,
            target_name,
            linearize(source_name, relation, target_name),
            math.sqrt(weight),
            True,
            self.entity_types[beam_target] if beam_target < n else None,
            None,
            None,
            None,
            (via,) if via == reached else (via, reached),
            candidates.vectors[i],
        )
        return known

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
        if entity >= self._n:
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

    def prepare(self, paths: list[Path], co_occurring: bool = False) -> None:
        """Read at once what expanding `paths` (the beams of one depth, `beam.beam_searches`)
        needs of their ends that neither the query nor the view has read yet: their
        edges' filters (one `_column_filters` over all their facts), their untyped links'
        tables (`links.link_tables`), with `co_occurring` (the repairs ask for it) their
        co-occurring entities and vectors, and their blocks of edge vectors (one
        `read_rows`, split per entity; `edge_rows`). The same values as read end by end:
        at 100k facts a query's beams reach ~45 ends no earlier query reached, and the
        ~55 block reads alone cost ~40 us each, mostly fixed costs."""
        n = self._n
        ends = list(dict.fromkeys(p.end for p in paths if p.end < n))
        missing = [e for e in ends if self._edges.get(e) is None]
        if len(missing) > 1:
            self._read_edges(missing)
        self.prepare_passing(paths)
        if self.links is not None:
            self._read_link_tables(list(dict.fromkeys(p.end for p in paths)))
        if co_occurring:
            self._read_co_occurring(ends)
        if self.edge_vectors is None:
            return
        indptr = self.graph.entity_facts.indptr
        unread = np.array([e for e in ends if e not in self._edge_blocks], np.int64)
        if len(unread) < 2:
            return
        starts = np.asarray(indptr[unread], np.int64)
        counts = np.asarray(indptr[unread + 1], np.int64) - starts
        rows = read_rows(np.asarray(self.edge_vectors), ranges(starts, counts))
        bounds = np.cumsum(counts).tolist()
        for entity, count, end in zip(unread.tolist(), counts.tolist(), bounds, strict=True):
            if count:
                self._edge_blocks[entity] = rows[end - count : end]

    def _read_link_tables(self, ends: list[int]) -> None:
        """The `LinkTable`s of the beam nodes `ends` not known yet, built together."""
        links, n = self.links, self._n
        entity_node = self._lists()[0]
        missing = []
        for end in ends:
            node = entity_node[end] if end < n else end - n
            if node < 0:
                continue
            if links.linkable[node]:
                if self.link_tables.get(node) is None:
                    missing.append(node)
            elif node not in self._hub_tables:
                missing.append(node)
        missing = list(dict.fromkeys(missing))
        if len(missing) < 2:
            return
        segments = [node_segments(links, node, self.focus) for node in missing]
        for node, table in zip(missing, link_tables(links, segments, missing), strict=True):
            if links.linkable[node]:
                self.link_tables.put(node, table, table.size)
            else:
                self._hub_tables[node] = table

    def _read_co_occurring(self, entities: list[int]) -> None:
        """`co_occurring` of the entities not read by the query yet, together: the
        segment products of those no query read (`co_occurring_candidates`) and one
        gather of all their vectors."""
        fresh = [e for e in entities if e not in self._co_occurring]
        if len(fresh) < 2 or not len(self.entity_vectors):
            return
        known = {e: self.co_occurring_targets.get(e) for e in fresh}
        cold = [e for e in fresh if known[e] is None]
        if cold:
            others = [self.edges_of(e).others for e in cold]
            for e, targets in zip(
                cold, co_occurring_candidates(self.graph, cold, others), strict=True
            ):
                known[e] = targets
        cold_set = set(cold)
        for e in fresh:
            targets = known[e]
            rows = self._buffered(e, targets)
            if e in cold_set:
                described = rows.any(axis=1)  # what the view keeps was described
                if not described.all():
                    targets, rows = targets[described], rows[described]
                    self._co_buffers.pop(e, None)
                else:
                    targets = targets.copy()
                self.co_occurring_targets.put(e, targets, len(targets))
            self._co_occurring[e] = (targets, rows)

    def _buffered(self, entity: int, targets: np.ndarray) -> np.ndarray:
        """The vectors of `targets` (rows of `entity_vectors`, as `np.asarray` of its
        fancy index gives them), gathered at the end of a buffer with a row free before
        them for each edge of `entity` (`_co_buffers`)."""
        vectors = np.asarray(self.entity_vectors)
        room = len(self.edges_of(entity).facts)
        buffer = np.empty((room + len(targets), vectors.shape[1]), vectors.dtype)
        rows = buffer[room:]
        vectors.take(targets, axis=0, out=rows, mode="clip")
        self._co_buffers[entity] = (buffer, room, rows)
        return rows

    def stacked_before(self, entity: int, at: np.ndarray, tail: np.ndarray) -> np.ndarray | None:
        """`stacked_rows(entity, at, tail)` for `tail` the entity's co-occurring vectors
        as read (`co_occurring`), as a view of their buffer: the edge rows are gathered
        into the rows free before them (valid until the next call for the entity); None
        where the buffer has no room or another dtype (`stacked_rows` then)."""
        known = self._co_buffers.get(entity)
        if known is None or self.edge_vectors is None:
            return None
        buffer, room, rows = known
        if tail is not rows or len(at) > room:
            return None
        block = self._block(entity)
        if block.dtype != buffer.dtype:
            return None
        start = room - len(at)
        block.take(np.asarray(at, np.int64), axis=0, out=buffer[start:room], mode="clip")
        return buffer[start:]

    def _read_edges(self, entities: list[int]) -> None:
        """`edges_of` of several entities, their edges (`MemoryGraph.edge_arrays` of each,
        cut from one gather of their CSR rows) and their facts' filters read in one pass."""
        graph = self.graph
        incidence = graph.entity_facts
        at = np.asarray(entities, np.int64)
        starts = np.asarray(incidence.indptr[at], np.int64)
        counts = np.asarray(incidence.indptr[at + 1], np.int64) - starts
        entries = ranges(starts, counts)
        facts = np.asarray(incidence.indices[entries], np.int64)
        outgoing = incidence.data[entries] > 0
        others = np.asarray(
            np.where(outgoing, graph.fact_tail[facts], graph.fact_head[facts]), np.int64
        )
        filters = _column_filters(self, facts)
        if filters is None:
            return  # read entity by entity (`edges_of`)
        end = 0
        for entity, count in zip(entities, counts.tolist(), strict=True):
            start, end = end, end + count
            known = EntityEdges(
                facts[start:end],
                others[start:end],
                outgoing[start:end],
                *(f[start:end] for f in filters),
            )
            self._edges.put(entity, known, count)

    def prepare_passing(self, paths: list[Path]) -> None:
        """`EntityEdges.passing` of each (end entity, intent) of `paths` not found yet,
        found together: the filters of all their edges in one pass, cut per pair."""
        pairs = list(
            dict.fromkeys(
                (p.end, p.intent)
                for p in paths
                if p.end < self._n and self._edges.get(p.end) is not None
            )
        )
        pairs = [(e, i) for e, i in pairs if i not in self._edges.get(e).memo]
        if len(pairs) < 2:
            return
        edges = [self._edges.get(e) for e, _ in pairs]
        counts = [len(x.facts) for x in edges]
        intents = np.repeat([INTENT_INDEX[i] for _, i in pairs], counts)
        labels = np.concatenate([x.labels for x in edges])
        failed = (
            np.concatenate([x.time_failed for x in edges])
            | np.concatenate([x.stability_failed for x in edges])
            | INTENT_FAILED_TABLE[intents, labels]
        )
        local = np.arange(len(failed)) - np.repeat(np.cumsum([0, *counts[:-1]]), counts)
        kept = np.flatnonzero(~failed)
        bounds = np.searchsorted(kept, np.cumsum([0, *counts])).tolist()
        for j, ((_, intent), x) in enumerate(zip(pairs, edges, strict=True)):
            at = local[kept[bounds[j] : bounds[j + 1]]]
            x.memo[intent] = (at, x.others[at])

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
        if not len(self.entity_vectors) or entity >= self._n:
            known = (np.zeros(0, np.int64), np.zeros((0, 0), np.float32))
        else:
            targets = self.co_occurring_targets.get(entity)
            if targets is not None:
                known = (targets, np.asarray(self.entity_vectors[targets]))
            else:
                targets = segment_product_order(self.graph, entity)
                linked = np.zeros(self._n, bool)
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
        return self.edge_hop(path.end, edge.fact, edge.other, edge.outgoing, repair, vector)

    def edge_hop_at(
        self,
        end: int,
        edges: EntityEdges,
        row: int,
        repair: str | None,
        vector: np.ndarray | None,
    ) -> Hop:
        """`edge_hop` along row `row` of `end`'s edge block `edges`."""
        return self.edge_hop(
            end,
            int(edges.facts[row]),
            int(edges.others[row]),
            bool(edges.outgoing[row]),
            repair,
            vector,
        )

    def edge_hop(
        self,
        end: int,
        fact: int,
        other: int,
        outgoing: bool,
        repair: str | None = None,
        vector: np.ndarray | None = None,
    ) -> Hop:
        """`fact_hop` from beam node `end` along `fact` to `other` (kept per query,
        `_hops`; the fact's fields per view, `fact_fields`)."""
        key = (end, fact, outgoing, repair)
        known = self._hops.get(key)
        if known is not None:
            return known
        fields = self.fact_fields.get(fact)
        if fields is None:
            if len(self.fact_fields) >= FACT_FIELDS:
                self.fact_fields.clear()
            fields = self.fact_fields[fact] = self._read_fields(fact)
        relation, confidence, valid_from, valid_to = fields
        known = self._hops[key] = new_hop(
            fact,
            end,
            other,
            relation,
            self.graph.entity_names[other],
            None,
            confidence,
            outgoing,
            self.entity_types[other],
            valid_from,
            valid_to,
            repair,
            (),
            self.graph.fact_vectors[fact] if vector is None else vector,
            (self.graph.linearized, fact),
        )
        return known

    def _read_fields(self, fact: int) -> tuple[Any, ...]:
        """(relation, confidence, valid_from, valid_to) of a fact: read straight from the
        fact columns, each field as its row would read it (`FactColumns.read`), where
        the graph's facts are a column selection; else from the row."""
        rows = self.graph.facts
        confidence = float(self.graph.fact_confidence[fact])
        if isinstance(rows, FactRows):
            columns, position = rows.columns, int(rows.positions(fact))
            return (
                columns.read("relation", position),
                confidence,
                columns.read("valid_from", position),
                columns.read("valid_to", position),
            )
        f = rows[fact]
        return f["relation"], confidence, f["valid_from"], f["valid_to"]

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
        if len(similarity) > SORTED_IN_PYTHON:
            return top_positions(similarity, self.m).tolist()
        # a stable sort, equal values in row order, as top_positions's for a few rows
        values = similarity.tolist()
        return sorted(range(len(values)), key=values.__getitem__, reverse=True)[: self.m]

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
        return self._block(entity)[np.asarray(at, np.int64)]

    def _block(self, entity: int) -> np.ndarray:
        """The entity's whole block of `edge_vectors` rows, read once a query."""
        block = self._edge_blocks.get(entity)
        if block is None:
            first = int(self.graph.entity_facts.indptr[entity])
            rows = first + np.arange(len(self.edges_of(entity).facts))
            block = read_rows(np.asarray(self.edge_vectors), rows)  # no memmap wrapping
            self._edge_blocks[entity] = block
        return block

    def stacked_rows(self, entity: int, at: np.ndarray, tail: np.ndarray) -> np.ndarray:
        """`np.concatenate([edge_rows(entity, at), tail])` (`at` not empty; `tail` of rows
        of the same width), the edge rows gathered straight into the result (one copy
        of each part, where the gather and the concatenation made two of the edge rows:
        a hub end's hundreds a beam)."""
        if not len(tail):
            return self.edge_rows(entity, at)
        if self.edge_vectors is None:
            return np.concatenate([self.edge_rows(entity, at), tail])
        block = self._block(entity)
        if np.result_type(block, tail) != block.dtype:
            return np.concatenate([block[np.asarray(at, np.int64)], tail])
        out = np.empty((len(at) + len(tail), block.shape[1]), block.dtype)
        block.take(np.asarray(at, np.int64), axis=0, out=out[: len(at)], mode="clip")
        out[len(at) :] = tail
        return out

    def _dtype(self, entity: int) -> np.dtype:
        """The dtype of `edge_rows` of the entity."""
        if self.edge_vectors is not None:
            return self.edge_vectors.dtype
        return np.asarray(self.graph.fact_vectors[:0]).dtype

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
        return [path.extend(hop) for hop in self.expand_hops(path)]

    def expand_hops(self, path: Path) -> list[Hop]:
        """The hops of `expand`'s paths, in order."""
        return self._expand_with(path, self.link_candidates(path))

    def expand_many(self, paths: list[Path]) -> list[list[Hop]]:
        """`expand_hops` of each path, the evidence vectors of all their untyped links
        read at once (`links.evidence_vectors`, row by row as path by path)."""
        dim = len(self.query_vector)
        walks = [self._walk(path) for path in paths]
        via = [s for walked in walks if walked is not None for s in walked[0]]
        reached = [s for walked in walks if walked is not None for s in walked[1]]
        vectors = evidence_vectors(self.links, via, reached, dim) if via else None
        expanded, start = [], 0
        for path, walked in zip(paths, walks, strict=True):
            untyped = no_candidates(dim)
            if walked is not None:
                count = len(walked[2])
                rows = vectors[start : start + count]
                untyped = kept_links(*walked, rows, self.query_vector)
                start += count
            expanded.append(self._expand_with(path, untyped))
        return expanded

    def _expand_with(self, path: Path, untyped: LinkCandidates) -> list[Hop]:
        """`expand_hops` of the path given its untyped neighbours."""
        end = path.end
        edges = self.edges_of(end)
        at, others = edges.passing(path.intent)
        if len(at):
            at = at[unvisited(others, path)]
        typed = len(at)
        if not typed and not len(untyped):
            return []
        if not typed:
            vectors = untyped.vectors
        else:  # the untyped links' vectors cast to the typed rows' dtype
            vectors = self.stacked_rows(
                end, at, untyped.vectors.astype(self._dtype(end), copy=False)
            )
        kept = []
        for i in self.best(vectors):
            if i < typed:
                hop = self.edge_hop_at(end, edges, int(at[i]), None, vectors[i])
            else:
                hop = self.link_hop(path, untyped, i - typed)
            kept.append(hop)
        return kept


SORTED_IN_PYTHON = 64
"""Rows `SearchSpace.best` ranks with Python's sort (stable, as `top_positions`'s) rather
than NumPy's partition and sort, whose fixed costs outweigh a few dozen rows."""
FACT_FIELDS = 1 << 18
"""Facts whose hop fields `SearchSpace.fact_fields` keeps before it starts over (as many as
`memory.fact_columns.ROW_CACHE` keeps rows)."""


def _link_lists(
    view: SnapshotView, links: PassageLinks
) -> tuple[list[int], list[float], list[int]]:
    """`links.entity_node`, `links.specificity` and `links.node_entity` as lists, once per
    view."""
    known = view.cache.get("real_link_lists")
    if known is None or known[0] is not links:
        known = (links, _link_lists_of(links))
        view.cache["real_link_lists"] = known
    return known[1]


def _link_lists_of(links: PassageLinks) -> tuple[list[int], list[float], list[int]]:
    return links.entity_node.tolist(), links.specificity.tolist(), links.node_entity.tolist()


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


def co_occurring_candidates(
    graph: MemoryGraph, entities: list[int], others: list[np.ndarray]
) -> list[np.ndarray]:
    """Per entity of `entities`, its `segment_product_order` without itself and the far
    ends of its facts (`others`, per entity): what `SearchSpace.co_occurring` keeps
    before dropping the entities without a description vector; for several entities in
    one pass of array calls."""
    n = graph.n_entities
    at = np.asarray(entities, np.int64)
    mentioned = graph.entity_segments
    starts = np.asarray(mentioned.indptr[at], np.int64)
    counts = np.asarray(mentioned.indptr[at + 1], np.int64) - starts
    segments = np.asarray(mentioned.indices[ranges(starts, counts)], np.int64)
    columns, _, per_segment = row_entries(graph.mentions, segments)
    group = np.repeat(np.repeat(np.arange(len(at)), counts), per_segment)
    distinct, first = np.unique(group * n + np.asarray(columns, np.int64), return_index=True)
    owner = distinct // n
    order = np.lexsort((-first, owner))  # per entity, last reached first (the product's)
    distinct, owner = distinct[order], owner[order]
    linked = np.concatenate(
        [at + np.arange(len(at)) * n]
        + [np.asarray(o, np.int64) + i * n for i, o in enumerate(others)]
    )
    keep = ~np.isin(distinct, linked)
    distinct, owner = distinct[keep], owner[keep]
    bounds = np.searchsorted(owner, np.arange(len(at) + 1)).tolist()
    targets = distinct - owner * n
    return [targets[bounds[i] : bounds[i + 1]] for i in range(len(at))]


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
