"""A read-only view of one snapshot: its LanceDB tables at the pinned versions and its graph
index (the facts as of the pinned recorded-time cutoff, with their links). Strategies
query through this view only.

A query brings its own coordinates (`QueryContext`): the valid time it asks about and
whether it is speculative; its facts are a mask over the index's fact columns (valid at
the query's reference time, stable unless speculative), cached per combination."""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import lancedb
import numpy as np
import pyarrow as pa
import scipy.sparse as sp

from memory.exact_segments import ExactSegments
from memory.fact_columns import FactColumns, FactRows
from memory.lexical_search import LexicalSearch
from schemas.tables import EXTRACTABLE_KINDS, VECTOR, VECTOR_COLUMNS, VECTOR_FUSION
from stores.graph_index import compute_graph_index, read_graph_index
from stores.pinned_table import has_vector_index, open_pinned
from stores.snapshots import Snapshot
from stores.workspace import lance_table_name
from transforms.embedding import encode
from transforms.graph_index import GraphIndex, alias_keys, fact_mask
from transforms.lexical import analyze
from transforms.vector_lists import unit_rows

QUERY_MEMO = "query_vectors_ahead"
QUERY_MEMO_SIZE = 8192
"""(encoder, text) query vectors `SnapshotView.prefill_queries` keeps: 3 MB at 384 dims."""
RETRIEVABLE_FILTER = f"kind IN ({', '.join(repr(kind) for kind in EXTRACTABLE_KINDS)})"
"""LanceDB filter of the segments retrieval returns (built from constants, not input)."""


def retrievable_filter(segments: lancedb.table.Table) -> str | None:
    """The prefilter a search of `segments` needs: `RETRIEVABLE_FILTER`, or None where every
    row is retrievable, as in the tables a build writes (it embeds only the retrievable
    kinds, `stores.stage_inputs`).

    A prefilter costs a pass over the `kind` column per search: measured on 403k segments,
    16 ms per full-text and per vector search against 4-5 ms for the search itself (with a
    bitmap index on `kind`, 4-5 ms more); a filter that keeps every row changes no result,
    so it is dropped. One counting pass per view (14 ms at 403k) decides."""
    every = segments.count_rows()
    return None if segments.count_rows(RETRIEVABLE_FILTER) == every else RETRIEVABLE_FILTER


@dataclass(frozen=True)
class QueryContext:
    """One query: its text, how many segments, its reference time, and whether it may use
    facts below θ_stable (REAL: only when the query is speculative)."""

    text: str
    k: int
    valid_at: datetime | None = None
    speculative: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)
    """Strategy options (e.g. REAL's evaluator backend, fusion weights); each strategy
    documents the keys it reads and falls back to its paper's defaults."""
    depth: int = 0
    """The k the flat candidate searches are sized by (`memory.strategies.hybrid.
    candidate_pool`; 0: `k`). `Memory.query` sets it to the k first asked and keeps it
    while it widens `k` to fill k passages, so the candidates, hence the ranking and its
    scores, do not change with the widening: a query's top hits do not depend on its k."""

    @property
    def fact_filter(self) -> tuple[datetime | None, bool]:
        return self.valid_at, self.speculative


def positions_of(ids: Sequence[str]) -> dict[str, int]:
    """Id -> its position in `ids` (the last, for a repeated id). Built by `dict(zip)`:
    0.11 s for 400k segment ids against 0.15 s for the equivalent comprehension."""
    return dict(zip(ids, range(len(ids)), strict=True))


@dataclass
class NodeNames:
    """Ids and names of a snapshot's graph nodes, in index position order, listed (and
    their lookups made) when first asked for and then shared by the graphs of every query
    coordinate and by the view (`SnapshotView.segment_index`). The passage graph's nodes
    are read only by the passage-graph strategies: listing their 600k ids with a lookup
    took 0.2-0.4 s and 80 MB of every other graph strategy's first query at 1M facts. The
    segment lookup is the view's `segment_index` too: built twice, it cost MemORAI's first
    query 0.13 s more at 1M facts."""

    entity_id_array: pa.Array
    entity_name_array: pa.Array
    segment_id_array: pa.Array
    node_ids: pa.Array
    """The passage graph's node ids (the index's, mapped)."""

    @functools.cached_property
    def entity_ids(self) -> list[str]:
        return self.entity_id_array.to_pylist()

    @functools.cached_property
    def entity_names(self) -> list[str]:
        return self.entity_name_array.to_pylist()

    @functools.cached_property
    def segment_ids(self) -> list[str]:
        return self.segment_id_array.to_pylist()

    @functools.cached_property
    def entity_position(self) -> dict[str, int]:
        return positions_of(self.entity_ids)

    @functools.cached_property
    def segment_position(self) -> dict[str, int]:
        return positions_of(self.segment_ids)

    @functools.cached_property
    def passage_nodes(self) -> list[str]:
        return self.node_ids.to_pylist()

    @functools.cached_property
    def passage_position(self) -> dict[str, int]:
        return positions_of(self.passage_nodes)


@dataclass
class SnapshotView:
    """Tables and facts of `snapshot`, read lazily and cached for the view's lifetime.

    The view holds no warehouse connection: each read opens a short read-only one
    (`reading`) and closes it, so an open view (an agent's `Memory`) never holds the file
    lock that a build writing into the same workspace waits for. Lance tables are read at
    the versions the snapshot pinned, whatever a build writes meanwhile."""

    snapshot: Snapshot
    connect: Callable[[], duckdb.DuckDBPyConnection]
    """Opens a read-only connection to the workspace's warehouse."""
    db: lancedb.DBConnection
    index_dir: Path | None = None
    """The local folder the snapshot's graph index is mapped from (None: compute it when
    first used)."""
    fetch_index: Callable[[], object] | None = None
    """Brings the index into `index_dir` before it is first mapped: a download from the
    workspace's data URL (`stores.graph_index.fetch_graph_index`); None when it is local."""
    home: Path | None = None
    """The workspace folder (its models, e.g. fitted weights); None: the folder holding the
    LanceDB database, as in a workspace that keeps its data locally."""
    cache: dict[str, Any] = field(default_factory=dict)
    """Structures that strategies derive from the view (e.g. the PPR graph), built once."""

    @contextmanager
    def reading(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only warehouse connection for one read, closed after it."""
        con = self.connect()
        try:
            yield con
        finally:
            con.close()

    def table(self, kind: str) -> lancedb.table.Table:
        """The LanceDB table of `kind` at the version the snapshot pinned, opened once per
        view (opening and checking out costs about 1 ms, a tenth of a search), its schema
        read once; `PinnedVersionGone` where that version is no longer the snapshot's
        (`stores.pinned_table`)."""
        if kind not in self.snapshot.lance_versions:
            raise LookupError(
                f"snapshot {self.snapshot.snapshot_id} pins no {kind!r} table "
                f"(it has {', '.join(self.snapshot.lance_versions)}); rebuild to add it"
            )
        key = ("lance_table", kind)
        if key not in self.cache:
            self.cache[key] = open_pinned(
                self.db,
                lance_table_name(self.snapshot.collection, kind),
                self.snapshot.lance_versions[kind],
                self.snapshot.created_at,
            )
        return self.cache[key]

    @functools.cached_property
    def retrievable_filter(self) -> str | None:
        """The prefilter of segment searches (`retrievable_filter`), decided once."""
        return retrievable_filter(self.table("segments"))

    @functools.cached_property
    def exact_segments(self) -> ExactSegments | None:
        """The exact vector search of the retrievable segments over the mapped graph
        index's segment vectors (`memory.exact_segments`), where the pinned segments table
        has no vector index and LanceDB would scan it; None otherwise (no mapped index, no
        vectors, or an indexed table)."""
        index = self.mapped_index
        if index is None or not index.segment_vectors.shape[1]:
            return None
        if has_vector_index(self.table("segments"), VECTOR):
            return None
        retrievable = None
        if self.retrievable_filter is not None:
            retrievable = np.flatnonzero(self.retrievable_segments)
        return ExactSegments.of(self.node_names.segment_ids, index.segment_vectors, retrievable)

    @functools.cached_property
    def lexical_search(self) -> LexicalSearch | None:
        """The BM25 search of the retrievable segments over the mapped graph index's
        postings (`memory.lexical_search`); None where the index has none (LanceDB's
        full-text search answers then)."""
        index = self.mapped_index
        if index is None or index.lexical is None:
            return None
        retrievable = self.retrievable_segments if self.retrievable_filter is not None else None
        return LexicalSearch.of(
            index.lexical,
            self.node_names.segment_ids,
            retrievable,
            self.speaker_terms,
            self.node_names.segment_position,
        )

    @functools.cached_property
    def speaker_terms(self) -> frozenset[str]:
        """The full-text terms of the speakers' names (a field of each turn's search text,
        scored as one: `memory.lexical_search`)."""
        speakers = self.segments.column("speaker").unique().drop_null().to_pylist()
        return frozenset(term for speaker in speakers for term in analyze(str(speaker)))

    @functools.cached_property
    def mapped_index(self) -> GraphIndex | None:
        """The graph index the snapshot's build wrote, mapped; None if it has none."""
        if self.index_dir is None:
            return None
        if self.fetch_index is not None:
            self.fetch_index()
        return read_graph_index(self.index_dir)

    @functools.cached_property
    def segments(self) -> pa.Table:
        """The pinned segments table without its vectors (mapped from the graph index
        when there is one, else read from LanceDB)."""
        if self.mapped_index is not None:
            return self.mapped_index.segment_rows
        return _without_vectors(self.table("segments").to_arrow())

    @functools.cached_property
    def segment_index(self) -> dict[str, int]:
        """Segment id -> row of `segments`: the graph index's segment lookup when the rows
        are the mapped index's (the same column, so the graphs share it)."""
        if self.mapped_index is not None:
            return self.node_names.segment_position
        return positions_of(self.segments.column("segment_id").to_pylist())

    @functools.cached_property
    def segment_kinds(self) -> list[str]:
        """Kind of each segment, in `segments` row order."""
        return self.segments.column("kind").to_pylist()

    @functools.cached_property
    def retrievable_segments(self) -> np.ndarray:
        """Per row of `segments`, whether retrieval may return it (a chunk or a turn)."""
        return np.isin(np.asarray(self.segment_kinds, dtype=object), EXTRACTABLE_KINDS)

    def segment_kind(self, segment_id: str) -> str:
        return self.segment_kinds[self.segment_index[segment_id]]

    @functools.cached_property
    def _lance_entities(self) -> pa.Table:
        return self.table("entities").to_arrow()

    @functools.cached_property
    def entities(self) -> pa.Table:
        """The pinned entities table without its vector (see `segments`)."""
        if self.mapped_index is not None:
            return self.mapped_index.entity_rows
        return _without_vectors(self._lance_entities)

    @functools.cached_property
    def entity_vectors(self) -> np.ndarray:
        """The entities' description vectors in `entities` order (n x dim)."""
        if self.mapped_index is not None:
            return self.mapped_index.entity_vectors
        column = self._lance_entities.column(VECTOR).combine_chunks()
        if not len(column):
            return np.zeros((0, column.type.list_size), np.float32)
        return np.asarray(column.flatten(), np.float32).reshape(len(column), -1)

    @functools.cached_property
    def entity_unit_vectors(self) -> np.ndarray:
        """`entity_vectors` scaled to unit length: mapped from the graph index when it
        stores them, else computed here once."""
        mapped = self.mapped_index
        if mapped is not None and mapped.entity_unit_vectors is not None:
            return np.asarray(mapped.entity_unit_vectors)  # the map, without memmap's wrapper
        return unit_rows(self.entity_vectors)

    @functools.cached_property
    def alias_index(self) -> dict[str, str]:
        """Normalised alias -> entity id, for linking query text to entities."""
        keys = self.mapped_index.alias_keys if self.mapped_index else alias_keys(self.entities)
        return dict(
            zip(keys.column("key").to_pylist(), keys.column("entity_id").to_pylist(), strict=True)
        )

    @functools.cached_property
    def graph_index(self) -> GraphIndex:
        """The snapshot's graph index: mapped from the file its build wrote, or computed
        here once for a snapshot that has none (recorded before indexes existed)."""
        if self.mapped_index is not None:
            return self.mapped_index
        model = self.snapshot.embedding_model
        with self.reading() as con:
            return compute_graph_index(con, self.db, self.snapshot, lambda t: encode(t, model))

    @functools.cached_property
    def node_names(self) -> NodeNames:
        """The index's node ids and names as Python lists and lookups, made once per view
        and shared by the graphs of every query coordinate."""
        index = self.graph_index
        return NodeNames(index.entity_ids, index.entity_names, index.segment_ids, index.node_ids)

    @functools.cached_property
    def fact_columns(self) -> FactColumns:
        """Field readers over the index's fact table (`memory.fact_columns`)."""
        return FactColumns(self.graph_index.facts)

    def fact_mask(self, query: QueryContext) -> np.ndarray:
        """The index's facts valid at the query's reference time, stable unless the query
        is speculative (one boolean per fact, cached per combination)."""
        key = ("fact_mask", *query.fact_filter)
        if key not in self.cache:
            self.cache[key] = fact_mask(self.graph_index, query.valid_at, query.speculative)
        return self.cache[key]

    @functools.cached_property
    def _segment_facts(self) -> sp.csr_matrix:
        return self.graph_index.fact_segments.T.tocsr()

    def segment_facts(self, segment_id: str, query: QueryContext) -> list[dict[str, Any]]:
        """The query's facts that `segment_id` supports, in the fact store's order."""
        matrix, mask = self._segment_facts, self.fact_mask(query)
        row = self.segment_index[segment_id]
        facts = np.sort(matrix.indices[matrix.indptr[row] : matrix.indptr[row + 1]])
        kept = facts[mask[facts]]
        return list(FactRows(self.fact_columns, kept))

    def embed_query(self, text: str, model: str | None = None) -> np.ndarray:
        """The query's vector under `model` (default: the snapshot's encoder), embedded in
        the query role; the last one per model is kept, as a strategy's helpers embed the
        same query text several times, and those `prefill_queries` encoded ahead are read
        from its memo."""
        model = model or self.snapshot.embedding_model
        ahead = self.cache.get(QUERY_MEMO)
        if ahead is not None and (model, text) in ahead:
            return ahead[(model, text)].copy()
        key = ("last_query_vector", model)
        last = self.cache.get(key)
        if last is None or last[0] != text:
            last = (text, encode([text], model, role="query")[0])
            self.cache[key] = last
        return last[1].copy()

    def prefill_queries(self, texts: Sequence[str]) -> None:
        """Encode `texts` as queries ahead, in batches, under the snapshot's encoder and its
        second (fusion) encoder where it has one, into a memo that `embed_query` reads: an
        evaluation asks every question of a dozen strategies, which embedded it each, one
        question at a time (issue 37). The memo holds the last `QUERY_MEMO_SIZE` (encoder,
        text) pairs. For the packaged encoders the vectors are bit for bit those of one text
        at a time (tests/memory/test_query_memo.py); a sentence-transformers model pads a
        batch, which may move the last bits."""
        ahead: OrderedDict[tuple[str, str], np.ndarray] = self.cache.setdefault(
            QUERY_MEMO, OrderedDict()
        )
        wanted = list(dict.fromkeys(texts))
        for model in (self.snapshot.embedding_model, self.fusion_encoder):
            if model is None:
                continue
            missing = [t for t in wanted if (model, t) not in ahead]
            for text, vector in zip(missing, encode(missing, model, role="query"), strict=True):
                ahead[(model, text)] = vector
            while len(ahead) > QUERY_MEMO_SIZE:
                ahead.popitem(last=False)

    @functools.cached_property
    def fusion_encoder(self) -> str | None:
        """The second encoder whose vectors the pinned segments table holds, else None."""
        model = self.snapshot.fusion_encoder
        if model is None or VECTOR_FUSION not in self.table("segments").schema.names:
            return None
        return model

    @functools.cached_property
    def _segment_arrays(self) -> dict[str, pa.Array]:
        """The segments' columns as single arrays, for reading one row: the mapped index's
        columns are one chunk each and are taken without a copy."""
        return {
            name: column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
            for name, column in zip(self.segments.column_names, self.segments.columns, strict=True)
        }

    def segment(self, segment_id: str, columns: Sequence[str] | None = None) -> dict[str, Any]:
        """The segment's row as Python values, only `columns` where given. Read value by
        value: a one-row slice converted whole took 150 us at 400k segments, against 26 us
        for all 18 columns and 4 us for the two that passage grouping reads, and a query
        reads a row per candidate."""
        row = self.segment_index[segment_id]
        arrays = self._segment_arrays
        return {name: arrays[name][row].as_py() for name in columns or arrays}


def _without_vectors(table: pa.Table) -> pa.Table:
    return table.drop_columns([c for c in VECTOR_COLUMNS if c in table.column_names])
