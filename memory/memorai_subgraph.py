"""MemORAI's query-focused subgraph (§3.3.1) and its query-conditioned edge weights (Eq. 1)
on the snapshot's heterogeneous provenance graph: entity, segment and fact nodes plus the
passage graph's LLM-free structural and phrase nodes.

Mapping to kgmem's data model (the paper's graph has entity, turn and topic-segment nodes
with entity–relation–entity, entity–turn and turn–segment edges):
- the paper's turn nodes are our retrievable segments (conversation turns and document
  chunks);
- its topic-segment nodes (LLM summaries of a run of turns on one topic) are played by
  the passage graph's session nodes (a conversation's sessions) and, for documents, by
  the document and topic (title) nodes: turn–segment edges are segment–session /
  segment–document / segment–topic links (`transforms.graph_nodes`);
- its entity nodes are our entities (with their description vectors) and, as
  description-less concept nodes, the phrase nodes (`transforms.phrases`); speaker, day,
  week and month nodes join them as provenance nodes (who said a turn, when): entity–turn
  edges are every segment – node link of the passage graph (`GraphIndex.segment_nodes`);
- a turn and its next turn in the same session (`GraphIndex.next_segment`) are the
  finest topic segment there is (the paper's segments are runs of successive turns): a
  turn – next-turn edge stands for that two-turn segment's turn–segment–turn path;
- a relation edge e1 -r-> e2 is reified as a fact node f between e1 and e2 (so it can be a
  seed, carry a vector and be cited on a path), and the fact's `source_segment_ids` (the
  paper's `source_turns`) become fact–segment edges. The typed facts are kept beside the
  passage nodes, none is dropped.
The structural and phrase nodes ("nodes", kind NODE) sit after the facts in the global
order [entities | segments | facts | nodes]; an entity the passage graph lists (a topic
whose title is an entity's name is that entity) stays one entity node.

Every edge is traversable both ways (§3.2 writes e <-> τ, τ <-> s), and both directions
carry the same type-specific weight, as the paper defines none for the reverse direction
(`edge_weights`): an edge touching a fact weighs sim(q, fact statement) (Eq. 1, second
case: the relation's weight); an entity–segment edge sim(q, entity) (Eq. 1, first case);
a node–segment edge the node's similarity surrogate (`node_similarity`: it has no vector,
so its specificity times the mean similarity of its segments in G_q); a turn – next-turn
edge that of its two-turn segment (`TURN_PAIR_SPECIFICITY`).

One hop (the paper: "all directly connected turns, entities, and segments") from an entity
reaches the segments mentioning it, its facts and their other ends (a relation edge is one
hop in the paper); from a segment, the entities and nodes it links to and the facts it
supports; from a fact, its two ends and its supporting segments. A fact seed's two ends
are seeds too (a seed relation edge brings its endpoints).

Where the paper's one hop is too short for our graph: in the paper a seed topic segment
brings all of its turns in one hop, and its entities link turns of many segments; our
segments are the turns themselves, so one hop from a seed turn reaches its entities,
nodes and adjacent turns but no other turn, and the second passage of a two-hop question
(the article a passage names, the turn of the same session or day) would stay outside
G_q. So the
seed segments also bring the segments of their *bridges*: the entities and nodes one hop
from a seed segment that link to at most `BRIDGE_CAP` segments (a specific node: a
title, a rare name, a session of a few turns; a speaker or a common phrase brings none).
That is a bounded segment → node → segment expansion, the radius of the paper's
seed-segment → turn hop. The edge set is the subgraph induced by the node set.

The structural matrices are built once per (view, fact coordinates) and cached; a query
reads the CSR rows of its seeds and of its nodes straight from the arrays
(`memory.csr.row_entries`) and keeps the entries whose column is a node (`induced`),
never scanning all nodes: scipy's `adjacency[nodes][:, nodes]` gives the same matrix but
filled a lookup over all 2.3M nodes at 1M facts and validated each request (1.8 ms for a
small subgraph; 0.3 ms this way).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from memory.csr import row_entries
from memory.graph import MemoryGraph, graph_of
from memory.snapshot_view import QueryContext, SnapshotView
from transforms.graph_index import DEFAULT_COORDINATES
from transforms.graph_structures import memorai_structure

ENTITY, SEGMENT, FACT, NODE = 0, 1, 2, 3
KIND_NAMES = ("entity", "segment", "fact", "node")
BRIDGE_CAP = 10
"""A seed segment's entity or node links G_q to its other segments when it links to at
most this many segments (option `bridge_cap`; 0: the paper's one hop alone)."""


@dataclass(frozen=True)
class Structure:
    """Unweighted edges over the global node order [entities | segments | facts]."""

    adjacency: sp.csr_matrix
    """Symmetric 0/1: entity–segment mentions, entity–fact ends, fact–segment support."""
    expansion: sp.csr_matrix
    """`adjacency` plus entity–entity through one fact: what one hop reaches."""
    n_entities: int
    n_segments: int
    n_facts: int

    @property
    def offsets(self) -> tuple[int, int, int]:
        return 0, self.n_entities, self.n_entities + self.n_segments

    def kinds(self, nodes: np.ndarray) -> np.ndarray:
        """ENTITY / SEGMENT / FACT of each global node index."""
        return np.searchsorted(np.array(self.offsets[1:]), nodes, side="right")


@dataclass(frozen=True)
class ProvenanceStructure:
    """`Structure` with the passage graph's structural and phrase nodes appended: edges
    over [entities | segments | facts | nodes]."""

    adjacency: sp.csr_matrix
    """Symmetric 0/1: `Structure.adjacency` plus segment–node links."""
    expansion: sp.csr_matrix
    """`Structure.expansion` plus segment–node links."""
    n_entities: int
    n_segments: int
    n_facts: int
    node_positions: np.ndarray
    """Passage-graph node position (`GraphIndex.segment_nodes` column) of each node."""
    segment_count: np.ndarray
    """Per global node: the segments it links to (entities and nodes; 0 for the rest)."""

    @property
    def n_nodes(self) -> int:
        return len(self.node_positions)

    @property
    def offsets(self) -> tuple[int, int, int, int]:
        n_e, n_s, n_f = self.n_entities, self.n_segments, self.n_facts
        return 0, n_e, n_e + n_s, n_e + n_s + n_f

    def kinds(self, nodes: np.ndarray) -> np.ndarray:
        """ENTITY / SEGMENT / FACT / NODE of each global node index."""
        return np.searchsorted(np.array(self.offsets[1:]), nodes, side="right")

    def specificity(self, nodes: np.ndarray) -> np.ndarray:
        """HippoRAG's node specificity: 1 / the segments each global node links to."""
        return 1.0 / np.maximum(self.segment_count[nodes], 1)


@dataclass(frozen=True)
class QuerySubgraph:
    """Nodes of G_q as positions per kind (graph positions; nodes: positions among the
    structure's nodes), and its induced adjacency in the local order [entities |
    segments | facts | nodes]."""

    entities: np.ndarray
    segments: np.ndarray
    facts: np.ndarray
    nodes: np.ndarray
    adjacency: sp.csr_matrix
    specificity: np.ndarray
    """Per local node: 1 / the segments it links to in the whole graph (1 for segments
    and facts)."""

    @property
    def size(self) -> int:
        return len(self.entities) + len(self.segments) + len(self.facts) + len(self.nodes)

    @property
    def kinds(self) -> np.ndarray:
        counts = (len(self.entities), len(self.segments), len(self.facts), len(self.nodes))
        return np.repeat(np.array([ENTITY, SEGMENT, FACT, NODE]), counts)


def structure_of(view: SnapshotView, query: QueryContext) -> Structure:
    """The heterogeneous structure for the query's fact coordinates: mapped from the graph
    index for the default coordinates (now, not speculative) when its build stored it,
    else built once and cached."""
    key = ("memorai_structure", *query.fact_filter)
    if key not in view.cache:
        graph = graph_of(view, query)
        stored = view.graph_index.memorai_structure
        if query.fact_filter == DEFAULT_COORDINATES and stored is not None:
            view.cache[key] = Structure(*stored, graph.n_entities, *_counts(graph))
        else:
            view.cache[key] = build_structure(graph)
    return view.cache[key]


def build_structure(graph: MemoryGraph) -> Structure:
    adjacency, expansion = memorai_structure(
        graph.mentions, graph.entity_facts, graph.fact_segments, graph.entity_adjacency
    )
    return Structure(adjacency, expansion, graph.n_entities, *_counts(graph))


def _counts(graph: MemoryGraph) -> tuple[int, int]:
    return len(graph.segment_ids), len(graph.facts)


def provenance_of(view: SnapshotView, query: QueryContext) -> ProvenanceStructure:
    """`structure_of` with the passage graph's non-entity nodes appended, built once per
    (view, fact coordinates) and cached."""
    key = ("memorai_provenance", *query.fact_filter)
    if key not in view.cache:
        index = view.graph_index
        links = index.segment_nodes
        is_entity = np.zeros(links.shape[1], bool)
        is_entity[index.entity_node[index.entity_node >= 0]] = True
        nodes = np.flatnonzero(~is_entity)
        view.cache[key] = with_nodes(
            structure_of(view, query), links[:, nodes].tocsr(), nodes, index.next_segment
        )
    return view.cache[key]


def with_nodes(
    core: Structure,
    segment_nodes: sp.csr_matrix,
    node_positions: np.ndarray,
    next_segment: np.ndarray | None = None,
) -> ProvenanceStructure:
    """`core` with the nodes of the segments x nodes incidence `segment_nodes` appended,
    and the turn – next-turn edges of `next_segment` (each segment's next turn, -1: none)
    between segments."""
    n_e, n_s, n_f = core.n_entities, core.n_segments, core.n_facts
    n_x = segment_nodes.shape[1]
    linked = sp.csr_matrix(segment_nodes, dtype=np.float64, copy=True)
    linked.sum_duplicates()
    linked.data[:] = 1.0  # `binary_pattern` would drop the (segment i, node i) entries
    block = sp.vstack([sp.csr_matrix((n_e, n_x)), linked, sp.csr_matrix((n_f, n_x))], format="csr")

    turns = _next_turns(n_e, n_s, n_f, next_segment)

    def extended(matrix: sp.csr_matrix) -> sp.csr_matrix:
        return sp.bmat([[matrix + turns, block], [block.T, None]], format="csr")

    entity_segments = core.adjacency[:n_e, n_e : n_e + n_s]
    counts = np.concatenate(
        [
            np.diff(entity_segments.tocsr().indptr),
            np.zeros(n_s + n_f, np.int64),
            np.diff(linked.tocsc().indptr),
        ]
    )
    return ProvenanceStructure(
        extended(core.adjacency),
        extended(core.expansion),
        n_e,
        n_s,
        n_f,
        np.asarray(node_positions, np.int64),
        counts,
    )


def _next_turns(n_e: int, n_s: int, n_f: int, next_segment: np.ndarray | None) -> sp.csr_matrix:
    """Symmetric 0/1 turn – next-turn edges over [entities | segments | facts]."""
    n = n_e + n_s + n_f
    if next_segment is None:
        return sp.csr_matrix((n, n))
    turns = np.flatnonzero(np.asarray(next_segment) >= 0)
    a, b = turns + n_e, np.asarray(next_segment, np.int64)[turns] + n_e
    ones = np.ones(2 * len(turns))
    return sp.csr_matrix((ones, (np.r_[a, b], np.r_[b, a])), shape=(n, n))


def global_nodes(
    structure: Structure | ProvenanceStructure,
    entities: list[int],
    segments: list[int],
    facts: list[int],
) -> np.ndarray:
    """Graph positions per kind -> global node indices."""
    start_e, start_s, start_f = structure.offsets[:3]
    return np.unique(
        np.concatenate(
            [
                np.asarray(entities, dtype=np.int64) + start_e,
                np.asarray(segments, dtype=np.int64) + start_s,
                np.asarray(facts, dtype=np.int64) + start_f,
            ]
        )
    )


def bridged_segments(
    structure: ProvenanceStructure, seed_segments: np.ndarray, cap: int
) -> np.ndarray:
    """Global indices of the segments two hops from the seed segments (global indices)
    through an entity or node linked to at most `cap` segments."""
    if cap <= 0 or not len(seed_segments):
        return np.zeros(0, np.int64)
    hop = np.unique(row_entries(structure.adjacency, np.asarray(seed_segments, np.int64))[0])
    kinds = structure.kinds(hop)
    bridges = hop[((kinds == ENTITY) | (kinds == NODE)) & (structure.segment_count[hop] <= cap)]
    far = row_entries(structure.adjacency, bridges)[0]
    return np.unique(far[structure.kinds(far) == SEGMENT])


def query_subgraph(
    structure: ProvenanceStructure,
    seeds: np.ndarray,
    seed_segments: np.ndarray | None = None,
    bridge_cap: int = 0,
) -> QuerySubgraph:
    """G_q: the seeds (global indices) and their one-hop neighbours, plus the segments the
    seed segments (global indices) reach through a bridge of at most `bridge_cap`
    segments (`bridged_segments`), with induced edges."""
    seeds = np.unique(np.asarray(seeds, dtype=np.int64))
    reached = row_entries(structure.expansion, seeds)[0]
    far = bridged_segments(structure, seeds if seed_segments is None else seed_segments, bridge_cap)
    nodes = np.unique(np.concatenate([seeds, reached, far]))  # sorted by kind
    kinds = structure.kinds(nodes)
    start = structure.offsets
    mirrored = (kinds == ENTITY) | (kinds == NODE)
    return QuerySubgraph(
        entities=nodes[kinds == ENTITY] - start[ENTITY],
        segments=nodes[kinds == SEGMENT] - start[SEGMENT],
        facts=nodes[kinds == FACT] - start[FACT],
        nodes=nodes[kinds == NODE] - start[NODE],
        # no edge among entities and nodes in the adjacency: their rows mirrored, not read
        adjacency=induced(structure.adjacency, nodes, mirrored),
        specificity=np.where(mirrored, structure.specificity(nodes), 1.0),
    )


def induced(
    matrix: sp.csr_matrix, nodes: np.ndarray, mirrored: int | np.ndarray = 0
) -> sp.csr_matrix:
    """`matrix[nodes][:, nodes]` for ascending distinct `nodes`, entries of each row in
    stored (ascending) order.

    The rows of the nodes not `mirrored` (a count of leading nodes, or a mask over
    `nodes`) are read, their entries whose column is one of `nodes` kept and renumbered
    by its place in `nodes` (looked up in this thread's lookup over all columns, zero
    outside a call: no pass over all columns, where scipy fills a new one per call). The
    rows of the mirrored nodes are not read but mirrored from those entries, which is
    exact when `matrix` is symmetric and has no entry among the mirrored nodes:
    MemORAI's adjacency has no entity–entity, entity–node or node–node edge, and an
    entity's or a node's row is where the size is (a hub's rows held ~215k entries in a
    2,700-node subgraph at 1M facts, its segments' and facts' rows a few each)."""
    if isinstance(mirrored, np.ndarray):
        mirror = mirrored.astype(bool)
    else:
        mirror = np.arange(len(nodes)) < mirrored
    read_at = np.flatnonzero(~mirror)
    columns, values, counts = row_entries(matrix, nodes[read_at])
    place = _lookup(matrix.shape[1])
    place[nodes] = np.arange(1, len(nodes) + 1, dtype=place.dtype)
    local = place[columns].astype(np.int64) - 1
    place[nodes] = 0
    inside = local >= 0
    rows = np.repeat(read_at, counts)[inside]
    local, values = local[inside], values[inside]
    if mirror.any():
        back = mirror[local]
        rows, local = np.concatenate([rows, local[back]]), np.concatenate([local, rows[back]])
        values = np.concatenate([values, values[back]])
        order = np.lexsort((local, rows))
        rows, local, values = rows[order], local[order], values[order]
    indptr = np.zeros(len(nodes) + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=len(nodes)), out=indptr[1:])
    return sp.csr_matrix((values, local, indptr), shape=(len(nodes), len(nodes)))


_LOOKUPS = threading.local()


def _lookup(size: int) -> np.ndarray:
    """This thread's zeroed int32 array of `size` entries (4 bytes a node: 9 MB at 1M
    facts), kept between calls."""
    held = getattr(_LOOKUPS, "arrays", None)
    if held is None:
        held = _LOOKUPS.arrays = {}
    if size not in held:
        held[size] = np.zeros(size, np.int32)
    return held[size]


TURN_PAIR_SPECIFICITY = 0.5
"""A turn and its next turn are read as a topic segment of two turns: their edge weighs
that segment's surrogate similarity, its specificity (1/2) times the mean similarity of
the two turns, as a session node's edges do (`node_similarity`)."""
_CARRIER_RANK = np.array([2, 0, 3, 1])
"""Which end of an edge carries its weight, by kind (ENTITY, SEGMENT, FACT, NODE): the
fact of an edge touching one, else the entity, else the node."""


def node_similarity(subgraph: QuerySubgraph, similarity: np.ndarray) -> np.ndarray:
    """`similarity` (per local node; the nodes' entries unused) with each node's surrogate
    in place: a structural or phrase node has no vector, so its similarity is its
    specificity times the mean similarity of its segments in G_q (a session of three
    turns on the question's subject weighs about a third of such a turn; a speaker of
    thousands of turns next to nothing). Eq. 1's seeds and weights then treat it as an
    entity whose description is its segments."""
    result = np.array(similarity, dtype=np.float64)
    n_nodes = len(subgraph.nodes)
    if not n_nodes:
        return result
    linked, total = _segment_sums(subgraph, np.maximum(result, 0.0))
    mean = np.divide(total, linked, out=np.zeros(n_nodes), where=linked > 0)
    nodes = np.arange(subgraph.size - n_nodes, subgraph.size)
    result[nodes] = subgraph.specificity[nodes] * mean
    return result


def _segment_sums(subgraph: QuerySubgraph, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per node of G_q (its last rows), the summed weights of its edges to segments and
    their sum weighted by `values` (per local node): `links.sum(axis=1)` and `links @
    values[segments]` of `links = adjacency[nodes][:, segments]`, bit for bit (each row's
    entries added from 0 in stored order, as scipy's product adds them), read from the
    node rows' CSR arrays instead of two scipy selections (~0.15 ms each a query)."""
    adjacency = subgraph.adjacency
    first = subgraph.size - len(subgraph.nodes)
    low = len(subgraph.entities)
    high = low + len(subgraph.segments)
    start, stop = adjacency.indptr[first], adjacency.indptr[-1]
    columns = adjacency.indices[start:stop]
    weights = adjacency.data[start:stop]
    rows = np.repeat(np.arange(len(subgraph.nodes)), np.diff(adjacency.indptr[first:]))
    to_segment = (columns >= low) & (columns < high)
    rows, columns, weights = rows[to_segment], columns[to_segment], weights[to_segment]
    size = len(subgraph.nodes)
    linked = np.bincount(rows, weights=weights, minlength=size)
    total = np.bincount(rows, weights=weights * values[columns], minlength=size)
    return linked, total


def edge_weights(subgraph: QuerySubgraph, similarity: np.ndarray) -> sp.csr_matrix:
    """Eq. 1 on G_q: an edge touching a fact weighs sim(q, fact); an entity–segment edge
    weighs sim(q, entity); a node–segment edge the node's similarity (`node_similarity`);
    `similarity` is per local node (segments' values unused). Pass ones for the uniform
    (w = 1) variant. The weights take the adjacency's own CSR structure (`induced` keeps
    each row's entries ascending and distinct, what a matrix built from its coordinates
    would sort them into), so no coordinate matrix is built and sorted again."""
    adjacency = subgraph.adjacency
    row = np.repeat(np.arange(adjacency.shape[0]), np.diff(adjacency.indptr))
    col = adjacency.indices
    kinds = subgraph.kinds
    rank = _CARRIER_RANK[kinds]
    carrier = np.where(rank[row] >= rank[col], row, col)
    similarity = np.asarray(similarity, dtype=np.float64)
    weights = similarity[carrier]
    turns = (kinds[row] == SEGMENT) & (kinds[col] == SEGMENT)
    pair = np.maximum(similarity[row[turns]], 0) + np.maximum(similarity[col[turns]], 0)
    weights[turns] = TURN_PAIR_SPECIFICITY * pair / 2
    structure = (col.copy(), adjacency.indptr.copy())  # sorted below in place if need be
    matrix = sp.csr_matrix((weights, *structure), shape=adjacency.shape)
    matrix.sum_duplicates()  # a no-op on `induced`'s rows; sorts any other adjacency
    return matrix
