"""PersonalAI's hybrid graph as sparse incidence matrices: object nodes joined by thesis
hyperedges and episodic hyperedges, built from the LLM-free passage graph.

The paper's graph has object nodes, thesis nodes ("hyperconnections among arbitrary sets
of nodes") and episodic nodes (the original passages, "hyperconnections linking relevant
nodes"), all three built by an LLM. Here, without one (issue 35), each plays as follows:

- object nodes: the snapshot's entities (the positions of `MemoryGraph`, first), then every
  other node of the passage graph (`memory.passage_graph`, after them): document topic /
  title nodes (`topic:`), phrase nodes (`phrase:`), and the document, session, speaker,
  day, week and month nodes of `transforms.graph_nodes`. They are the concepts the
  paper's LLM would name: a title or a noun phrase two passages share is the bridge of a
  two-hop question, as an entity is;
- thesis hyperedges: every fact of the query's coordinates (a proposition over its head
  and tail, the paper's simple subject–relation–object triplet), and every PersonalAI
  thesis of the LLM stage (`memory.personalai.theses`) over the entities it names,
  resolved through the snapshot's alias index (names that resolve to no entity are
  dropped, a thesis resolving to none is dropped);
- episodic hyperedges: every segment, over every passage-graph node it links to
  (`view.graph_index.segment_nodes`: the entities it mentions, its topics, phrases and
  structural nodes), so a traversal steps from a query node through a passage to the
  nodes it shares with another passage.

Hub control (the paper's graphs hold a few thousand passages; it is silent): a node
linked to more than `MAX_NODE_SEGMENTS` (32) segments joins no episode. A speaker of
hundreds of turns, a month, a phrase as common as "time" would otherwise join every
passage to every other in two steps, and each step through it would read all of them;
by specificity (HippoRAG's 1 / #segments) such a node says nothing about which passage a
question wants. Its facts still join it to other entities. Chosen on the dev sets (see
`memory.strategies.personalai`).

A node's hyperedges and a hyperedge's members are CSR rows of the incidence matrix and of
its transpose; a node's neighbours (nodes sharing a hyperedge) are read off those rows,
every node's once per hypergraph, into its adjacency (A*'s lists).
Each hyperedge has a text vector for similarity to the question: the stored fact statement
vector, the thesis text embedded once per view, the segment's stored vector. Entity nodes
carry their description vectors (A*'s inner-product heuristic); the other nodes have none.
Hyperedges support segments: a fact its source segments, a thesis the segment it was read
from, an episode itself. The structure is built once per (view, fact coordinates, hub
bound) and cached in the view.

The paper's node-type restrictions "E" (no episodic) and "T" (no thesis) drop those
hyperedges from the incidence (`restricted`); "O" (no object nodes) has no meaning when
the hyperedges' members are all object nodes, so it is refused.

A traversal scores 60k-120k hyperedges a query at 1M facts, the hyperedges of the nodes
it steps from. A node's fact hyperedges are scored from its block of the index's
`search_edge_vectors` (`FactBlocks`: one read of the file per node into a reused buffer,
nothing mapped), where the index has them; measured at 1M facts (`kgmem bench
retrieval`, stop 33), this took the variants that score hyperedges from peaks of
3.3-3.7 GB to 1.9-2.4 GB, and their p50 down 3-15 % (one process, 20 queries each), with
every score the same bits. The other hyperedge vectors (episodes' segment vectors, and
facts where the index has no blocks) are read through the index's mappings without
handing pages back (`SelectedRows.unbounded`), unlike the bounded reads of REAL and
MemORAI (`transforms.mapped_rows`): a traversal reads most of those rows again at the
next query, so handing them back doubled its p50 (1M facts: WaterCircles 428 -> 907 ms,
beam 287 -> 475 ms). The pages kept are clean pages of the index files, which the kernel
reclaims under memory pressure.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from memory.csr import ranges
from memory.fact_columns import SelectedRows, StackedRows
from memory.graph import MemoryGraph, graph_of, search_edge_vectors, search_graph
from memory.personalai.theses import LlmThesis, read_theses
from memory.snapshot_view import NodeNames, QueryContext, SnapshotView
from transforms.consolidation import normalize_name
from transforms.embedding import encode
from transforms.mapped_rows import span_products

FACT, THESIS, EPISODE = 0, 1, 2
"""Hyperedge kinds: a fact of the memory graph, an LLM thesis, an episode (segment)."""
KIND_NAMES = ("fact", "thesis", "episode")
MAX_NODE_SEGMENTS = 32
ADJACENCY_BATCH = 32_768
"""Hyperedge memberships whose members one step of `Hypergraph.adjacency` reads (its
peak beside the lists: 200k memberships a step raised the 100k-fact bench's peak by
25 MB, 32k by under 1 MB)."""
"""Hub control: a passage-graph node linked to more segments joins no episode."""
RESTRICTIONS = {None: (), "all": (), "E": (EPISODE,), "T": (FACT, THESIS)}
"""The paper's restriction settings -> the hyperedge kinds they bar from traversal."""


@dataclass
class Hypergraph:
    """Nodes x hyperedges incidence with per-hyperedge kind, vector and supported segments."""

    incidence: sp.csr_matrix
    """n_nodes x n_hyperedges, 1 where the node is a member of the hyperedge."""
    kinds: np.ndarray
    """Per hyperedge, FACT, THESIS or EPISODE."""
    vectors: np.ndarray | StackedRows
    """n_hyperedges x dim, normalised text vectors (`StackedRows` of the mapped fact and
    segment vectors in a snapshot's hypergraph: multiplied block by block, never copied)."""
    node_vectors: np.ndarray
    """Normalised node vectors, a row for each of the first nodes (the entities); the
    nodes after them (topic, phrase, structural) have none (`node_vectors_of`)."""
    supports: sp.csr_matrix
    """n_hyperedges x n_segments, 1 where the hyperedge stands on the segment."""
    refs: np.ndarray
    """Per hyperedge, its index among facts, theses or segments (by kind)."""

    @classmethod
    def from_members(
        cls,
        n_nodes: int,
        members: Sequence[Sequence[int]],
        kinds: Sequence[int],
        vectors: np.ndarray,
        node_vectors: np.ndarray,
        supports: sp.csr_matrix | None = None,
        refs: Sequence[int] | None = None,
    ) -> Hypergraph:
        """A hypergraph from member lists (hyperedge i joins nodes `members[i]`)."""
        cols = np.repeat(np.arange(len(members)), [len(m) for m in members])
        rows = np.fromiter((n for m in members for n in m), dtype=np.int64, count=len(cols))
        incidence = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_nodes, len(members)))
        return cls.from_incidence(incidence, kinds, vectors, node_vectors, supports, refs)

    @classmethod
    def from_incidence(
        cls,
        incidence: sp.spmatrix,
        kinds: Sequence[int] | np.ndarray,
        vectors: np.ndarray | StackedRows,
        node_vectors: np.ndarray,
        supports: sp.csr_matrix | None = None,
        refs: Sequence[int] | np.ndarray | None = None,
    ) -> Hypergraph:
        """A hypergraph from its nodes x hyperedges incidence (any nonzero is membership)."""
        incidence = sp.csr_matrix(incidence, dtype=np.float64)
        incidence.data[:] = 1.0
        n = incidence.shape[1]
        return cls(
            incidence=incidence,
            kinds=np.asarray(kinds, dtype=np.int8),
            vectors=vectors
            if isinstance(vectors, StackedRows)
            else np.asarray(vectors, np.float32),
            node_vectors=np.asarray(node_vectors, dtype=np.float32),
            supports=supports if supports is not None else sp.identity(n, format="csr"),
            refs=np.asarray(refs if refs is not None else np.arange(n), dtype=np.int64),
        )

    @property
    def n_nodes(self) -> int:
        return self.incidence.shape[0]

    @property
    def n_hyperedges(self) -> int:
        return self.incidence.shape[1]

    @functools.cached_property
    def adjacency(self) -> tuple[np.ndarray, np.ndarray]:
        """Every node's neighbours (`neighbour_rows`) as (indptr, neighbours): node u's are
        `neighbours[indptr[u]:indptr[u + 1]]`, the most recently met first. Built once
        per hypergraph, in batches of nodes of at most `ADJACENCY_BATCH` hyperedge
        memberships (~25 ms and 1.7 MB at 100k facts: 422k entries over 42.6k nodes), so
        that a query's A* reads its lists as slices instead of reading them off the
        hyperedges itself (~320 lists a query, 1.3 ms)."""
        reached = np.cumsum(np.diff(self.incidence.indptr))
        counts = np.zeros(self.n_nodes, np.int64)
        index = np.int32 if self.n_nodes < 1 << 31 else np.int64
        parts = [np.zeros(0, index)]
        low = 0
        while low < self.n_nodes:
            before = int(reached[low - 1]) if low else 0
            high = int(np.searchsorted(reached, before + ADJACENCY_BATCH, side="right"))
            high = max(high, low + 1)
            members, counts[low:high] = self.neighbour_rows(np.arange(low, high))
            parts.append(members.astype(index))
            low = high
        indptr = np.zeros(self.n_nodes + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        return indptr, np.concatenate(parts)

    @functools.cached_property
    def kind_counts(self) -> list[int]:
        """Per kind (`KIND_NAMES`), how many hyperedges are of it."""
        return np.bincount(self.kinds, minlength=len(KIND_NAMES)).tolist()

    @functools.cached_property
    def members(self) -> sp.csr_matrix:
        """n_hyperedges x n_nodes: each hyperedge's member nodes."""
        return self.incidence.T.tocsr()

    def node_vectors_of(self, nodes: np.ndarray | Sequence[int]) -> np.ndarray:
        """The vectors of `nodes`, zero for the nodes without one."""
        nodes = np.asarray(nodes, np.int64)
        vectors = np.zeros((len(nodes), self.node_vectors.shape[1]), np.float32)
        held = nodes < len(self.node_vectors)
        vectors[held] = self.node_vectors[nodes[held]]
        return vectors

    def hyperedges_of(self, node: int) -> np.ndarray:
        row = self.incidence
        return row.indices[row.indptr[node] : row.indptr[node + 1]]

    def members_of(self, hyperedge: int) -> np.ndarray:
        row = self.members
        return row.indices[row.indptr[hyperedge] : row.indptr[hyperedge + 1]]

    def neighbour_rows(self, nodes: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(every node's neighbours concatenated node by node, each node's count): the
        other members of its hyperedges, the most recently met first. Read off the nodes'
        hyperedges in order (a sparse node x node product would lose that order), all in
        one pass: the members of every node's hyperedges in a row (grouped by node, in the
        order met), each (node, member) pair's first occurrence kept (`first_pairs`), each
        node's group reversed."""
        nodes = np.asarray(nodes, np.int64)
        if not len(nodes):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        node_of_edge, edges = row_entries(self.incidence, nodes)
        edge_at, members = row_entries(self.members, edges)
        owners = node_of_edge[edge_at]
        kept = first_pairs(owners, members, len(nodes), self.n_nodes)
        kept &= members != nodes[owners]
        owners, members = owners[kept], members[kept]
        counts = np.bincount(owners, minlength=len(nodes))
        ends = np.cumsum(counts)
        mirrored = np.empty_like(members)
        mirrored[(2 * ends - counts - 1)[owners] - np.arange(len(members))] = members
        return mirrored, counts

    def joining(self, u: int, v: int) -> np.ndarray:
        """The hyperedges that have both `u` and `v` as members."""
        return np.intersect1d(self.hyperedges_of(u), self.hyperedges_of(v), assume_unique=True)

    def segments_of(self, hyperedge: int) -> np.ndarray:
        row = self.supports
        return row.indices[row.indptr[hyperedge] : row.indptr[hyperedge + 1]]

    def restricted(self, barred: Sequence[int]) -> Hypergraph:
        """The same hypergraph with hyperedges of the `barred` kinds joining no node."""
        if not barred:
            return self
        keep = (~np.isin(self.kinds, list(barred))).astype(np.float64)
        incidence = (self.incidence @ sp.diags(keep)).tocsr()
        incidence.eliminate_zeros()
        return replace(self, incidence=incidence)


def smallest_first(values: np.ndarray, count: int) -> np.ndarray:
    """`np.argsort(values, kind="stable")[:count]` without sorting every value: only those
    at most the `count`-th smallest (ties at it kept, in index order) are sorted. A hub's
    A* expansion has thousands of neighbours of which at most `max_passed_nodes` are
    kept; a WaterCircles ring of a hub's circle, hundreds of thousands of hyperedges of
    which it crosses 64 (the full sort was half its time)."""
    if count >= len(values):
        return np.argsort(values, kind="stable")
    if count <= 0:
        return np.zeros(0, np.int64)
    at = np.flatnonzero(values <= np.partition(values, count - 1)[count - 1])
    return at[np.argsort(values[at], kind="stable")][:count]


def first_occurrences(key: np.ndarray, size: int) -> np.ndarray:
    """Positions of the first occurrence of each distinct value of `key` (ints in
    [0, size)), in increasing order. In O(len(key)) through a scratch array of `size` (a
    sort is six times slower on a WaterCircles ring's half million hyperedges, and nine
    times on an A* depth's 60k pushes) unless `key` is short against `size`, where the
    scratch array would cost more than sorting. The scratch array is left unfilled but
    at `key`'s values, the only entries read."""
    if len(key) * 16 < size:
        _, at = np.unique(key, return_index=True)
        at.sort()
        return at
    first = np.empty(size, np.int64)
    first[key] = len(key)
    position = np.arange(len(key))
    np.minimum.at(first, key, position)
    return np.flatnonzero(first[key] == position)


def first_pairs(rows: np.ndarray, columns: np.ndarray, n_rows: int, n_columns: int) -> np.ndarray:
    """Per position, whether it is the first occurrence of its (row, column) pair (rows
    in [0, n_rows), columns in [0, n_columns)): the pair keys with their positions in the
    low digits sorted as one int64 array (an unstable sort of distinct values, several
    times faster than the stable argsort `np.unique(keys, return_index=True)` runs),
    where those fit in 62 bits."""
    key = rows * n_columns + columns
    size = len(key)
    first = np.zeros(size, bool)
    if not size:
        return first
    if n_rows * n_columns * size >= 1 << 62:
        first[np.unique(key, return_index=True)[1]] = True
        return first
    ordered = np.sort(key * size + np.arange(size))
    pair = ordered // size
    head = np.empty(size, bool)
    head[0] = True
    np.not_equal(pair[1:], pair[:-1], out=head[1:])
    first[(ordered - pair * size)[head]] = True
    return first


def row_entries(matrix: sp.csr_matrix, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The entries of `rows` of a CSR matrix, concatenated in order, as (position in
    `rows` of the row each comes from, column index as int64)."""
    rows = np.asarray(rows, np.int64)
    starts = matrix.indptr[rows]
    lengths = matrix.indptr[rows + 1] - starts
    if not len(lengths):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    columns = matrix.indices[offsets + np.arange(int(lengths.sum()))].astype(np.int64)
    return np.repeat(np.arange(len(rows)), lengths), columns


@dataclass(frozen=True)
class FactBlocks:
    """Each node's fact hyperedges as one block of rows of the graph index's
    `search_edge_vectors`: the statement vectors of the search graph (every fact version,
    `memory.graph.search_graph`) entity by entity, each fact in its head's and its tail's
    block. Rows of versions outside the query's coordinates belong to no hyperedge here.

    A traversal step scores all the hyperedges of a few nodes (a beam's last nodes, a
    WaterCircles frontier): ~50k fact rows a query at 1M facts, scattered over the 1.5 GB
    fact matrix. Gathered through its mapping they left ~2.5 GB of it mapped in 20 queries
    (each row maps a 64 KB window, `transforms.mapped_rows`); read as one block per node
    from the file into a reused buffer (`span_products`), they leave nothing mapped. The
    rows are the same float32 values, multiplied row by row as `EdgeSimilarity` does, so
    every score is the same bits."""

    vectors: np.ndarray
    """`search_edge_vectors` (mapped)."""
    indptr: np.ndarray
    """Node u's block is rows indptr[u] to indptr[u + 1] (the search graph's entity x fact
    incidence)."""
    hyperedges: np.ndarray
    """Per row of `vectors`, the fact hyperedge it is, -1 for none."""

    @classmethod
    def of(cls, view: SnapshotView, query: QueryContext, graph: MemoryGraph) -> FactBlocks | None:
        """The blocks of the hypergraph of `graph` (the query's coordinates, whose fact i is
        hyperedge i); None where the index stores no `search_edge_vectors` or the graph's
        facts are no selection of the index's rows."""
        search = search_graph(view, query)
        vectors = search_edge_vectors(view, search)
        if (
            vectors is None
            or not isinstance(graph.fact_vectors, SelectedRows)
            or not isinstance(search.fact_vectors, SelectedRows)
        ):
            return None
        incidence = search.entity_facts
        facts = search.fact_vectors.positions[incidence.indices]
        hyperedges = graph.fact_vectors.within(facts)
        return cls(vectors, np.asarray(incidence.indptr, np.int64), hyperedges)

    @property
    def n_nodes(self) -> int:
        return len(self.indptr) - 1

    def scores(self, nodes: np.ndarray, question: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(fact hyperedges, their cosines to `question`) of the blocks of `nodes`, each
        row's product taken alone (`span_products(each_row=True)`); a fact whose both ends
        are among `nodes` comes twice, with the same score."""
        starts, ends = self.indptr[nodes], self.indptr[nodes + 1]
        products = span_products(self.vectors, starts, ends, question, each_row=True)
        hyperedges = self.hyperedges[ranges(starts, ends - starts)]
        kept = hyperedges >= 0
        return hyperedges[kept], products[kept]


def score_hyperedges_of(similarity: np.ndarray | EdgeSimilarity, nodes: np.ndarray) -> None:
    """Have `similarity` score the hyperedges of `nodes` now, where it scores lazily
    (`EdgeSimilarity.score_nodes`); an array of scores has them all."""
    if isinstance(similarity, EdgeSimilarity):
        similarity.score_nodes(nodes)


class EdgeSimilarity:
    """Cosines of the hyperedges' text vectors to the question, computed for the
    hyperedges a query's traversals touch, when first asked for, and kept for the query.

    Indexed like the array `vectors @ question` (an int gives a float32 scalar, an index
    array an array), but a query no longer multiplies every hyperedge vector: at a million
    facts that product read 2 GB of mapped vectors, 270 ms a query, more than a dense
    search, while a bounded traversal touches a few thousand hyperedges. Each row's
    product is an `einsum` of that row alone, so a hyperedge's score is the same bits
    whichever batch computed it (a BLAS product of a sub-matrix may differ in the last
    bit from the whole matrix's); `scores` gives them all at once, as the whole array.
    """

    CHUNK = 16_384
    """Rows gathered and multiplied at a time (bounds the copy: 24 MiB at 384 floats)."""

    def __init__(
        self,
        vectors: np.ndarray | StackedRows,
        question: np.ndarray,
        fact_blocks: FactBlocks | None = None,
    ) -> None:
        self._vectors = vectors
        self._question = np.asarray(question, np.float32)
        self._values = np.full(len(vectors), np.nan, np.float32)
        self._slots: np.ndarray | None = None
        self._blocks = fact_blocks
        self._nodes_scored: np.ndarray | None = None

    def score_nodes(self, nodes: np.ndarray | Sequence[int]) -> None:
        """Score every fact hyperedge of `nodes` now, each node's from its block of
        `fact_blocks` (once a query): the rows a traversal step asks for next, read as a
        few runs of the file instead of scattered rows of the mapping. Without blocks,
        nothing: the hyperedges are scored when asked for."""
        if self._blocks is None:
            return
        if self._nodes_scored is None:
            self._nodes_scored = np.zeros(self._blocks.n_nodes, bool)
        nodes = np.asarray(nodes, np.int64)
        nodes = nodes[nodes < self._blocks.n_nodes]  # topic, phrase, structural: no facts
        fresh = np.unique(nodes[~self._nodes_scored[nodes]])
        if len(fresh):
            self._nodes_scored[fresh] = True
            hyperedges, values = self._blocks.scores(fresh, self._question)
            self._values[hyperedges] = values

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, key: int | np.integer | np.ndarray) -> np.ndarray:
        values = self._values[key]
        missing = np.isnan(values)
        if not np.any(missing):
            return values
        wanted = np.asarray(key)[missing] if np.ndim(missing) else np.asarray([key])
        self._compute(self._distinct(wanted))
        return self._values[key]

    def _distinct(self, rows: np.ndarray) -> np.ndarray:
        """The distinct values of `rows`, ascending (`np.unique`'s result), deduplicated in
        one pass through a scratch array of slots (each row keeps its last position)
        before sorting: a beam step asks for a hub episode once per member, and
        `np.unique` of a WaterCircles ring's 100,000 hyperedges took 100 ms a query."""
        if len(rows) < 1_024:
            return np.unique(rows)
        if self._slots is None:
            self._slots = np.empty(len(self._values), np.int64)
        position = np.arange(len(rows))
        self._slots[rows] = position
        return np.sort(rows[self._slots[rows] == position])

    def scores(self) -> np.ndarray:
        """Every hyperedge's score (the whole product, for tests and small graphs)."""
        self._compute(np.flatnonzero(np.isnan(self._values)))
        return self._values.copy()

    def _compute(self, rows: np.ndarray) -> None:
        for start in range(0, len(rows), self.CHUNK):
            chunk = rows[start : start + self.CHUNK]
            self._values[chunk] = (
                self._vectors.row_products(chunk, self._question)
                if isinstance(self._vectors, StackedRows)
                else np.einsum("ij,j->i", np.asarray(self._vectors[chunk]), self._question)
            )


@dataclass
class PersonalGraph:
    """The hypergraph of a view and query coordinates, with what names its parts."""

    hypergraph: Hypergraph
    graph: MemoryGraph
    theses: list[LlmThesis]
    segment_vectors: np.ndarray
    """n_segments x dim, stored segment vectors in `graph.segment_ids` order (mapped from
    the snapshot's graph index)."""
    fact_blocks: FactBlocks | None = None
    """Where the index has them, each node's fact hyperedges as one block of rows
    (`EdgeSimilarity.score_nodes`); None where facts are barred or the index has none."""
    extra_nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """Passage-graph position of each node after the entities (topic, phrase, structural
    nodes: `memory.passage_graph`)."""
    node_of_passage: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    """Per passage-graph node, its node position here."""
    specificity: np.ndarray | None = None
    """Per node, 1 / the number of segments linking to it (None: no passage nodes)."""
    names: NodeNames | None = None
    """The snapshot's node ids (the passage-graph nodes' names)."""

    def label(self, hyperedge: int) -> str:
        """A readable name of one hyperedge: the fact linearized, the thesis text, the
        episode's segment id."""
        kind, ref = int(self.hypergraph.kinds[hyperedge]), int(self.hypergraph.refs[hyperedge])
        if kind == FACT:
            return self.graph.linearized(ref)
        if kind == THESIS:
            return f"[thesis] {self.theses[ref].text}"
        return f"[episode] {self.graph.segment_ids[ref]}"

    @property
    def node_specificity(self) -> np.ndarray:
        """Per node, 1 / the number of segments linking to it (all 1 without passage nodes)."""
        if self.specificity is None:
            return np.ones(self.hypergraph.n_nodes)
        return self.specificity

    @property
    def first_episode(self) -> int:
        """The hyperedge of segment 0's episode (episodes come last, one per segment)."""
        return self.hypergraph.n_hyperedges - len(self.graph.segment_ids)

    def episode_members(self, segments: np.ndarray) -> sp.csr_matrix:
        """len(segments) x n_nodes: the members of each segment's episode."""
        return self.hypergraph.members[self.first_episode + np.asarray(segments, np.int64)]

    def name(self, node: int) -> str:
        """An entity's name, another node's id (`topic:…`, `phrase:…`, `session:…`)."""
        n_e = self.graph.n_entities
        if node < n_e or self.names is None:
            return self.graph.entity_names[node]
        return str(self.names.node_ids[int(self.extra_nodes[node - n_e])])

    def names_of(self, nodes: np.ndarray) -> list[str]:
        """`name` of each of `nodes`, the other nodes' ids read in one take of the
        snapshot's id array (a traversal visits thousands of nodes a query, and one
        `name` at a time cost the explanation ~2 ms of it at 100k facts)."""
        nodes = np.asarray(nodes, np.int64)
        names = self.graph.entity_names
        if self.names is None:
            return [names[node] for node in nodes.tolist()]
        n_e = self.graph.n_entities
        found = [names[node] if node < n_e else "" for node in nodes.tolist()]
        extra = np.flatnonzero(nodes >= n_e)
        if len(extra):
            ids = self.names.node_ids.take(self.extra_nodes[nodes[extra] - n_e]).to_pylist()
            for at, node_id in zip(extra.tolist(), ids, strict=True):
                found[at] = str(node_id)
        return found

    def first_names(self, nodes: np.ndarray, count: int) -> list[str]:
        """The `count` first of the names of `nodes` in sorted order (`sorted(names_of(
        nodes))[:count]`, an explanation shows 50 of the thousands of nodes a traversal
        visits): the entities' from their places in the order of every entity's name
        (`_entity_order`, one partition), the other nodes' ids read and the head taken
        (`heapq.nsmallest`), the two heads merged."""
        nodes = np.asarray(nodes, np.int64)
        names = self.graph.entity_names
        n_e = self.graph.n_entities
        ranks = self._entity_rank[nodes[nodes < n_e]]
        if len(ranks) > count:
            ranks = np.partition(ranks, count - 1)[:count]
        found = [names[node] for node in self._entity_order[np.sort(ranks)].tolist()]
        extra = nodes[nodes >= n_e]
        if len(extra) and self.names is not None:
            ids = self.names.node_ids.take(self.extra_nodes[extra - n_e]).to_pylist()
            found = heapq.nsmallest(count, [*found, *heapq.nsmallest(count, map(str, ids))])
        return found[:count]

    @functools.cached_property
    def _entity_order(self) -> np.ndarray:
        """The entity positions in the order of their names (ties by position): sorted as
        Arrow strings, whose byte order is Python's code point order."""
        names = self.graph.entity_names
        try:
            return np.asarray(pc.sort_indices(pa.array(names, pa.string())), np.int64)
        except (pa.ArrowException, UnicodeError):
            return np.array(sorted(range(len(names)), key=names.__getitem__), np.int64)

    @functools.cached_property
    def _entity_rank(self) -> np.ndarray:
        """Per entity position, its place in `_entity_order`."""
        order = self._entity_order
        rank = np.empty(len(order), np.int64)
        rank[order] = np.arange(len(order))
        return rank

    def passage_positions(self, node_ids: dict[str, float]) -> dict[int, float]:
        """Passage-graph node ids (entity ids or others) with weights -> node positions
        with weights; ids the hypergraph does not hold are dropped."""
        found = {}
        for node_id, weight in node_ids.items():
            if node_id in self.graph.entity_position:
                found[self.graph.entity_position[node_id]] = weight
            elif self.names is not None and node_id in self.names.passage_position:
                found[int(self.node_of_passage[self.names.passage_position[node_id]])] = weight
        return found


def personal_graph_of(
    view: SnapshotView,
    query: QueryContext,
    restriction: str | None = None,
    max_node_segments: int = MAX_NODE_SEGMENTS,
) -> PersonalGraph:
    """The PersonalAI hypergraph for the query's fact coordinates, restricted as the paper's
    "E" / "T" settings say, episodes joining the nodes linked to at most
    `max_node_segments` segments; built on first use and cached in the view."""
    if restriction not in RESTRICTIONS:
        raise ValueError(
            f"unknown PersonalAI restriction {restriction!r}; choose one of "
            f"{', '.join(str(r) for r in RESTRICTIONS)} ('O' has no meaning here: the "
            "hyperedges' members are all object nodes)"
        )
    key = ("personalai_hypergraph", max_node_segments, *query.fact_filter)
    if key not in view.cache:
        view.cache[key] = _build(view, query, graph_of(view, query), max_node_segments)
    full: PersonalGraph = view.cache[key]
    barred = RESTRICTIONS[restriction]
    if not barred:
        return full
    restricted_key = (*key, restriction)
    if restricted_key not in view.cache:
        view.cache[restricted_key] = replace(
            full,
            hypergraph=full.hypergraph.restricted(barred),
            fact_blocks=None if FACT in barred else full.fact_blocks,
        )
    return view.cache[restricted_key]


def _build(
    view: SnapshotView, query: QueryContext, graph: MemoryGraph, max_node_segments: int
) -> PersonalGraph:
    """The hypergraph's incidence in three column blocks (facts, theses, episodes), each
    built from index arrays with no per-fact or per-segment Python loop."""
    seg_vectors = view.graph_index.segment_vectors
    theses, thesis_members = _resolved_theses(view, graph)
    thesis_vectors = encode([t.text for t in theses], view.snapshot.embedding_model)
    dim = seg_vectors.shape[1]
    nodes = _passage_nodes(view, graph, max_node_segments)
    n_e, n_f, n_t, n_s = graph.n_entities, len(graph.facts), len(theses), len(graph.segment_ids)
    n_nodes = n_e + len(nodes.extra)
    fact_index = np.arange(n_f)
    fact_block = sp.csr_matrix(
        (
            np.ones(2 * n_f),
            (np.r_[graph.fact_head, graph.fact_tail], np.r_[fact_index, fact_index]),
        ),
        shape=(n_nodes, n_f),
    )
    thesis_cols = np.repeat(np.arange(n_t), [len(m) for m in thesis_members])
    thesis_rows = np.fromiter((n for m in thesis_members for n in m), np.int64, len(thesis_cols))
    thesis_block = sp.csr_matrix(
        (np.ones(len(thesis_rows)), (thesis_rows, thesis_cols)), shape=(n_nodes, n_t)
    )
    thesis_segments = sp.csr_matrix(
        (np.ones(n_t), (np.arange(n_t), [graph.segment_position[t.segment_id] for t in theses])),
        shape=(n_t, n_s),
    )
    supports = sp.vstack(
        [graph.fact_segments, thesis_segments, sp.identity(n_s, format="csr")], format="csr"
    )
    thesis_vectors = thesis_vectors if n_t else np.zeros((0, dim), np.float32)
    vectors = StackedRows(  # read without handing pages back: see the module docstring
        [
            graph.fact_vectors.unbounded()
            if isinstance(graph.fact_vectors, SelectedRows)
            else graph.fact_vectors,
            thesis_vectors,
            SelectedRows(seg_vectors, np.arange(n_s), bounded=False),
        ]
    )
    kinds = np.concatenate([np.full(n_f, FACT), np.full(n_t, THESIS), np.full(n_s, EPISODE)])
    hypergraph = Hypergraph.from_incidence(
        sp.hstack([fact_block, thesis_block, nodes.episodes], format="csr"),
        kinds=kinds,
        vectors=vectors,
        node_vectors=_entity_vectors(view),
        supports=supports,
        refs=np.concatenate([fact_index, np.arange(n_t), np.arange(n_s)]),
    )
    return PersonalGraph(
        hypergraph,
        graph,
        theses,
        seg_vectors,
        FactBlocks.of(view, query, graph),
        nodes.extra,
        nodes.position,
        nodes.specificity,
        view.node_names,
    )


@dataclass(frozen=True)
class _EpisodeMembers:
    """The episodic block of the incidence and the nodes beside the entities."""

    episodes: sp.csr_matrix
    """n_nodes x n_segments: each segment's episode over the nodes it links to."""
    extra: np.ndarray
    """Passage-graph position of each node after the entities (topic, phrase, structural)."""
    position: np.ndarray
    """Per passage-graph node, its node position in the hypergraph."""
    specificity: np.ndarray
    """Per hypergraph node, 1 / the number of segments that link to it (1 where none)."""


def _passage_nodes(view: SnapshotView, graph: MemoryGraph, max_segments: int) -> _EpisodeMembers:
    """Each segment's episode over every passage-graph node it links to (the entities it
    mentions, its topic, document, session, speaker and day nodes, its phrases), entities
    at their entity positions and the other nodes after them; a node linked to more than
    `max_segments` segments (a speaker of hundreds of turns, a common phrase) joins no
    episode, so that no traversal floods through it."""
    index = view.graph_index
    links = index.segment_nodes
    n_e = graph.n_entities
    counts = np.asarray(links.sum(axis=0)).ravel()
    entity_node = np.asarray(index.entity_node, np.int64)
    is_entity = np.zeros(links.shape[1], bool)
    is_entity[entity_node[entity_node >= 0]] = True
    extra = np.flatnonzero(~is_entity)
    position = np.empty(links.shape[1], np.int64)
    position[entity_node[entity_node >= 0]] = np.flatnonzero(entity_node >= 0)
    position[extra] = n_e + np.arange(len(extra))
    specificity = np.ones(n_e + len(extra))
    specificity[position] = 1.0 / np.maximum(counts, 1.0)
    coo = links.tocoo()
    kept = counts[coo.col] <= max_segments
    episodes = sp.csr_matrix(
        (np.ones(int(kept.sum())), (position[coo.col[kept]], coo.row[kept])),
        shape=(n_e + len(extra), links.shape[0]),
    )
    return _EpisodeMembers(episodes, extra, position, specificity)


def _resolved_theses(
    view: SnapshotView, graph: MemoryGraph
) -> tuple[list[LlmThesis], list[list[int]]]:
    """The snapshot's theses whose segment it holds and whose entities resolve, with the
    node positions of those entities."""
    kept, members = [], []
    with view.reading() as con:
        theses = read_theses(con, view.snapshot.collection)
    for thesis in theses:
        if thesis.segment_id not in graph.segment_position:
            continue
        nodes = {
            graph.entity_position[entity]
            for entity in (view.alias_index.get(normalize_name(t)) for t in thesis.entity_texts)
            if entity in graph.entity_position
        }
        if nodes:
            kept.append(thesis)
            members.append(sorted(nodes))
    return kept, members


def _entity_vectors(view: SnapshotView) -> np.ndarray:
    """Entity description vectors in entity order, normalised (mapped from the index)."""
    return view.entity_unit_vectors
