"""The graph index of one snapshot: everything the graph strategies read, as columns and
CSR matrices, computed once at build time instead of at a snapshot's first query.

Nodes are the snapshot's entities and segments in their pinned table order. The facts are
every version the snapshot can see (recorded by its cutoff, not retracted), whatever
their valid time or confidence, in the fact store's total order; a query picks its facts
with vectorised masks (`fact_mask`): valid at its reference time, stable unless it is
speculative. So one index serves every query coordinate, and selecting a coordinate's
facts is a pass over two timestamp columns, not a database read.

Choices the papers leave open:
- Timestamps are int64 microseconds since the epoch (UTC); an open start is the smallest
  int64 and an open end the largest, so "valid at V" is `from <= V < to` on integers. A
  reference time without a zone is taken as UTC.
- A fact whose head or tail is not an entity of the snapshot has position -1: it stays in
  the index (a segment's provenance lists it) but never becomes a graph edge.
- A segment that lists an entity twice, or a fact that cites a segment twice, links once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from schemas.tables import VECTOR, VECTOR_COLUMNS
from transforms.consolidation import normalize_name
from transforms.graph_links import fact_statement
from transforms.graph_structures import entity_adjacency, entity_fact_incidence, memorai_structure
from transforms.lexical import LexicalIndex, build_lexical_index
from transforms.vector_lists import (
    EXACT_BELOW,
    VectorLists,
    build_vector_lists,
    unit_rows,
)

DEFAULT_COORDINATES: tuple[datetime | None, bool] = (None, False)
"""A query's (valid time, speculative) when it names neither: the facts valid now and
stable. The structures of this selection are stored in the index; any other selection's
are built by the query process."""
SEARCH_COORDINATES: tuple[datetime | None, bool] = (None, True)
"""The coordinates of REAL's search graph: every fact version, whatever its valid time
and confidence (`memory.real.space.search_graph`; its filters are applied per edge)."""
OPEN_START = np.iinfo(np.int64).min
OPEN_END = np.iinfo(np.int64).max

Embed = Callable[[list[str]], np.ndarray]
"""Normalised float32 vectors of statements (facts the stored table lacks)."""


@dataclass(frozen=True)
class GraphIndex:
    """Nodes, facts and their links of one snapshot (arrays may be memory-mapped)."""

    entity_rows: pa.Table
    """The pinned entities table without its vector, in its row (= entity position) order."""
    entity_vectors: np.ndarray
    """The entities' description vectors, row i for entity position i."""
    alias_keys: pa.Table
    """(key, entity_id): each normalised name or alias and the first entity (in row order)
    that has it, for linking query text to entities."""
    segment_rows: pa.Table
    """The pinned segments table without its vector columns, in row (= position) order."""
    facts: pa.Table
    """Every fact version the snapshot sees, one row per fact position."""
    fact_head: np.ndarray
    """Entity position of each fact's head (-1: not an entity of the snapshot)."""
    fact_tail: np.ndarray
    fact_confidence: np.ndarray
    fact_stable: np.ndarray
    fact_valid_from: np.ndarray
    """Microseconds since the epoch; OPEN_START where the start is unknown."""
    fact_valid_to: np.ndarray
    """Microseconds since the epoch; OPEN_END where the fact is still true."""
    fact_vectors: np.ndarray
    """Normalised statement vectors, row i for fact position i (n_facts x dim)."""
    mentions: sp.csr_matrix
    """n_segments x n_entities: 1 where the segment mentions the entity."""
    fact_segments: sp.csr_matrix
    """n_facts x n_segments: 1 where the segment supports the fact."""
    node_ids: pa.Array
    """Passage-graph nodes: every entity a segment mentions and every structural or phrase
    node it links to (`node_ids`), in order of first appearance."""
    segment_nodes: sp.csr_matrix
    """n_segments x n_nodes: 1 where the segment links to the node."""
    entity_node: np.ndarray
    """Node position of each entity (-1: no segment mentions it)."""
    next_segment: np.ndarray
    """Segment position of each turn's next turn (-1: none)."""
    segment_vectors: np.ndarray
    """The segments' stored vectors, row i for segment position i (n_segments x dim)."""
    fact_lists: VectorLists | None = None
    """IVF index of `fact_vectors` (`transforms.vector_lists`); None: a query multiplies
    every fact vector (below `EXACT_BELOW` facts, or an index written without it)."""
    entity_lists: VectorLists | None = None
    """IVF index of the entities' vectors scaled to unit length (`unit_rows`); None as
    for `fact_lists`."""
    default_graph: tuple[sp.csr_matrix, sp.csr_matrix] | None = None
    """The entity x fact incidence (`entity_fact_incidence`) and the fact x segment support
    of the facts a query of `DEFAULT_COORDINATES` selects (`default_positions`); None in an
    index written before it was stored."""
    memorai_structure: tuple[sp.csr_matrix, sp.csr_matrix] | None = None
    """MemORAI's adjacency and expansion (`transforms.graph_structures.memorai_structure`)
    of the default coordinates' facts; None in an index written before it was stored."""
    entity_unit_vectors: np.ndarray | None = None
    """`entity_vectors` scaled to unit length (`unit_rows`), the node vectors of REAL and
    PersonalAI; None in an index written before it was stored (computed at query time)."""
    search_edge_vectors: np.ndarray | None = None
    """The statement vectors of `search_edge_facts`, in that order: each entity's edges in
    REAL's search graph as one contiguous block of rows (n_edges x dim). None in an index
    computed in memory or written before it was stored; then REAL gathers an entity's
    rows from `fact_vectors`, scattered over the matrix (see `search_edge_facts`)."""
    lexical: LexicalIndex | None = None
    """The segments' search texts as BM25 postings (`transforms.lexical`), row i for
    segment position i; None in an index written before it was stored (then the lexical
    search is LanceDB's full-text index)."""

    @property
    def entity_ids(self) -> pa.Array:
        return self.entity_rows.column("entity_id").combine_chunks()

    @property
    def entity_names(self) -> pa.Array:
        return self.entity_rows.column("name").combine_chunks()

    @property
    def segment_ids(self) -> pa.Array:
        return self.segment_rows.column("segment_id").combine_chunks()

    @property
    def n_facts(self) -> int:
        return len(self.fact_head)

    @property
    def in_graph(self) -> np.ndarray:
        """Facts whose both ends are entities of the snapshot."""
        return (self.fact_head >= 0) & (self.fact_tail >= 0)


SEARCH_TEXT = "search_text"
"""The segments' column their full-text index (LanceDB's, and `GraphIndex.lexical`) holds."""


def build_graph_index(
    entities: pa.Table,
    segments: pa.Table,
    facts: pa.Table,
    stored_vectors: tuple[pa.Array, np.ndarray],
    embed: Embed,
) -> GraphIndex:
    """The index of the snapshot's `entities` and `segments` tables (as pinned, vectors
    included) and `facts` (the fact store's rows: ids, ends, confidence, valid interval,
    supporting segments, `stable`). `stored_vectors` are (fact ids, vectors) of the
    snapshot's facts table; facts it lacks are embedded with `embed` on their statement."""
    entity_ids = entities.column("entity_id").combine_chunks()
    segment_ids = segments.column("segment_id").combine_chunks()
    n_e, n_s, n_f = len(entity_ids), len(segment_ids), facts.num_rows
    node_ids, segment_nodes = _segment_nodes(segments)
    following = (
        _positions(segments.column("next_segment_id"), segment_ids)
        if "next_segment_id" in segments.column_names
        else np.full(n_s, -1, np.int64)
    )
    entity_rows = entities.drop_columns([c for c in VECTOR_COLUMNS if c in entities.column_names])
    entity_vectors = _vector_matrix(entities)
    index = GraphIndex(
        entity_rows=entity_rows.combine_chunks(),
        entity_vectors=entity_vectors,
        alias_keys=alias_keys(entity_rows),
        segment_rows=segments.drop_columns(
            [c for c in VECTOR_COLUMNS if c in segments.column_names]
        ).combine_chunks(),
        facts=facts.combine_chunks(),
        fact_head=_positions(facts.column("head_entity_id"), entity_ids),
        fact_tail=_positions(facts.column("tail_entity_id"), entity_ids),
        fact_confidence=np.asarray(facts.column("confidence").to_numpy(), np.float64),
        fact_stable=np.asarray(facts.column("stable").to_numpy(zero_copy_only=False), bool),
        fact_valid_from=_microseconds(facts.column("valid_from"), OPEN_START),
        fact_valid_to=_microseconds(facts.column("valid_to"), OPEN_END),
        fact_vectors=_fact_vectors(facts, stored_vectors, embed),
        mentions=_incidence(segments.column("entity_ids"), entity_ids, (n_s, n_e)),
        fact_segments=_incidence(facts.column("source_segment_ids"), segment_ids, (n_f, n_s)),
        node_ids=node_ids,
        segment_nodes=segment_nodes,
        entity_node=_positions(pa.chunked_array([entity_ids]), node_ids),
        next_segment=following,
        segment_vectors=_vector_matrix(segments),
        entity_unit_vectors=unit_rows(entity_vectors),
        lexical=build_lexical_index(segments.column(SEARCH_TEXT).to_pylist())
        if SEARCH_TEXT in segments.column_names
        else None,
    )
    index = replace(index, default_graph=default_graph(index))
    return replace(index, memorai_structure=default_memorai_structure(index))


def default_positions(index: GraphIndex) -> np.ndarray:
    """Positions of the facts a query of `DEFAULT_COORDINATES` selects: those of its graph
    (`memory.graph.graph_of`), whose both ends are entities."""
    return np.flatnonzero(fact_mask(index, *DEFAULT_COORDINATES) & index.in_graph)


def default_graph(index: GraphIndex) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """The entity x fact incidence and the fact x segment support of the default
    coordinates' facts: built at query time they took 0.3-0.5 s of a 1M-fact snapshot's
    first graph query."""
    positions = default_positions(index)
    head, tail = index.fact_head[positions], index.fact_tail[positions]
    incidence = entity_fact_incidence(head, tail, index.entity_rows.num_rows)
    return incidence, index.fact_segments[positions]


def default_memorai_structure(index: GraphIndex) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """MemORAI's structure over the default coordinates' facts (`default_positions`):
    built at query time it took 2.8 s of a 1M-fact snapshot's first MemORAI query."""
    positions = default_positions(index)
    head, tail = index.fact_head[positions], index.fact_tail[positions]
    n_e = index.entity_rows.num_rows
    confidence = np.asarray(index.fact_confidence[positions], np.float64)
    entity_facts, fact_segments = index.default_graph or default_graph(index)
    return memorai_structure(
        index.mentions,
        entity_facts,
        fact_segments,
        entity_adjacency(head, tail, confidence, n_e),
    )


def search_edge_facts(index: GraphIndex) -> np.ndarray:
    """Fact positions in the order of the entries of the entity x fact incidence of the
    `SEARCH_COORDINATES` graph (`memory.graph.graph_of`: `entity_fact_incidence` of its
    facts' ends, entity by entity, each entity's facts ascending), the rows of
    `search_edge_vectors`.

    REAL ranks every edge of each entity its beams reach by its statement vector (TopM):
    ~15k rows a query at 1M facts, the edges of ~40 entities, hubs of thousands among
    them. Gathered from `fact_vectors`, where an entity's facts lie anywhere in 1.5 GB,
    each row mapped its own 64 KB window (`transforms.mapped_rows`): measured at 1M
    facts, ~14 us a row when not mapped yet against ~2 us for the same number of rows
    read as one block per entity, which this order makes of them (the rows are the same
    float32 values, so every product and ranking is unchanged). PersonalAI scores the
    fact hyperedges of the nodes its traversals step from by the same blocks
    (`memory.personalai.hypergraph.FactBlocks`). Every fact is stored twice (its head's
    and its tail's block): 3 GB at 1M facts."""
    positions = np.flatnonzero(fact_mask(index, *SEARCH_COORDINATES) & index.in_graph)
    head, tail = index.fact_head[positions], index.fact_tail[positions]
    incidence = entity_fact_incidence(head, tail, index.entity_rows.num_rows)
    return positions[incidence.indices]


def with_vector_lists(index: GraphIndex) -> GraphIndex:
    """`index` with the IVF indexes of its fact and entity vectors (`VectorLists`), built
    where it lacks them and the matrix is large enough to need one. Built with the
    index at build time, never for an index computed at query time (an old snapshot's):
    building both at 1M facts took 89 s, the cost of ~300 whole
    products of a query there."""
    return replace(
        index,
        fact_lists=index.fact_lists or build_vector_lists(index.fact_vectors),
        entity_lists=index.entity_lists
        or (
            build_vector_lists(
                index.entity_unit_vectors
                if index.entity_unit_vectors is not None
                else unit_rows(index.entity_vectors)
            )
            if len(index.entity_vectors) >= EXACT_BELOW
            else None
        ),
    )


def alias_keys(entities: pa.Table) -> pa.Table:
    """(key, entity_id) of every normalised name and alias of `entities` (entity_id, name,
    aliases), the first entity in row order winning a shared key; empty keys dropped."""
    keys: dict[str, str] = {}
    names = entities.column("name").to_pylist()
    aliases = (
        entities.column("aliases").to_pylist()
        if "aliases" in entities.column_names
        else [[]] * len(names)
    )
    for entity, name, more in zip(
        entities.column("entity_id").to_pylist(), names, aliases, strict=True
    ):
        for alias in [name, *(more or [])]:
            key = normalize_name(alias)
            if key:
                keys.setdefault(key, entity)
    return pa.table(
        {
            "key": pa.array(list(keys), pa.string()),
            "entity_id": pa.array(list(keys.values()), pa.string()),
        }
    )


def fact_mask(index: GraphIndex, valid_at: datetime | None, speculative: bool) -> np.ndarray:
    """Facts valid at `valid_at` (all if None), stable unless the query is speculative:
    the fact store's as-of semantics (`stores.fact_queries`) as a mask."""
    mask = np.ones(index.n_facts, bool) if speculative else np.array(index.fact_stable, bool)
    if valid_at is not None:
        at = microseconds(valid_at)
        mask &= (index.fact_valid_from <= at) & (index.fact_valid_to > at)
    return mask


def microseconds(moment: datetime) -> int:
    """`moment` as microseconds since the epoch (a naive moment is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _positions(ids: pa.ChunkedArray, nodes: pa.Array) -> np.ndarray:
    """Position of each id among `nodes`, -1 where it is not one."""
    found = pc.index_in(ids, value_set=nodes)
    return np.asarray(found.fill_null(-1).to_numpy(), np.int64)


def _microseconds(column: pa.ChunkedArray, missing: int) -> np.ndarray:
    as_int = pc.cast(pc.cast(column, pa.timestamp("us", tz="UTC")), pa.int64())
    return np.asarray(as_int.fill_null(missing).to_numpy(), np.int64)


def _incidence(lists: pa.ChunkedArray, nodes: pa.Array, shape: tuple[int, int]) -> sp.csr_matrix:
    """0/1 matrix with row i linking to the nodes that list i names (unknown ids dropped)."""
    flat = lists.combine_chunks()
    rows = np.asarray(pc.list_parent_indices(flat).to_numpy(), np.int64)
    cols = _positions(pa.chunked_array([pc.list_flatten(flat)]), nodes)
    known = cols >= 0
    matrix = sp.csr_matrix(
        (np.ones(int(known.sum())), (rows[known], cols[known])), shape=shape, dtype=np.float64
    )
    matrix.data[:] = 1.0
    matrix.sort_indices()
    return matrix


def _vector_matrix(table: pa.Table) -> np.ndarray:
    """The `vector` column as an n x dim float32 matrix (n x 0 when there is none)."""
    if VECTOR not in table.column_names or not table.num_rows:
        return np.zeros((table.num_rows, 0), np.float32)
    column = table.column(VECTOR).combine_chunks()
    return np.asarray(column.flatten(), np.float32).reshape(len(column), -1)


def _segment_nodes(segments: pa.Table) -> tuple[pa.Array, sp.csr_matrix]:
    """The passage-graph nodes (entities mentioned, then `node_ids` links, in order of
    first appearance) and the segment x node incidence."""
    columns = [c for c in ("entity_ids", "node_ids") if c in segments.column_names]
    rows, values = [], []
    for name in columns:
        flat = segments.column(name).combine_chunks()
        rows.append(np.asarray(pc.list_parent_indices(flat).to_numpy(), np.int64))
        values.append(pc.list_flatten(flat).cast(pa.string()))
    every = pa.concat_arrays(values) if values else pa.array([], pa.string())
    parents = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    present = np.asarray(every.is_valid().to_numpy(zero_copy_only=False), bool)
    encoded = pc.dictionary_encode(every.filter(pa.array(present)))
    cols = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), np.int64)
    shape = (segments.num_rows, len(encoded.dictionary))
    matrix = sp.csr_matrix((np.ones(len(cols)), (parents[present], cols)), shape=shape)
    matrix.data[:] = 1.0
    matrix.sort_indices()
    return encoded.dictionary, matrix


def _fact_vectors(
    facts: pa.Table,
    stored_vectors: tuple[pa.Array, np.ndarray],
    embed: Embed,
) -> np.ndarray:
    stored_ids, stored = stored_vectors
    at = _positions(facts.column("fact_id"), pa.array(stored_ids, pa.string()))
    dim = stored.shape[1] if stored.size else 0
    missing = np.flatnonzero(at < 0)
    embedded = _embed_missing(facts, missing, embed)
    dim = dim or (embedded.shape[1] if embedded.size else 0)
    vectors = np.zeros((facts.num_rows, dim), np.float32)
    found = at >= 0
    vectors[found] = stored[at[found]]
    if len(missing):
        vectors[missing] = embedded
    return vectors


def _embed_missing(facts: pa.Table, missing: np.ndarray, embed: Embed) -> np.ndarray:
    """Statement vectors of the facts at `missing` (a snapshot taken before the facts
    table stored them)."""
    if not len(missing):
        return np.zeros((0, 0), np.float32)
    rows = facts.select(["head_name", "relation", "tail_name"]).take(missing).to_pylist()
    texts = [fact_statement(r["head_name"], r["relation"], r["tail_name"]) for r in rows]
    return np.asarray(embed(texts), np.float32)
