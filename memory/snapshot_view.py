"""A read-only view of one snapshot: its LanceDB tables at the pinned versions and its facts
as of the pinned recorded-time cutoff. Strategies query through this view only.

A query brings its own coordinates (`QueryContext`): the valid time it asks about and
whether it is speculative; facts are selected for those coordinates (valid at the query's
reference time, stable unless speculative) and cached per combination."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import duckdb
import lancedb
import numpy as np
import pyarrow as pa

from memory.facts import AsOf, facts_as_of
from schemas.tables import EXTRACTABLE_KINDS, VECTOR_COLUMNS, VECTOR_FUSION
from stores.snapshots import Snapshot
from stores.workspace import lance_table_name
from transforms.consolidation import normalize_name
from transforms.embedding import encode

RETRIEVABLE_FILTER = f"kind IN ({', '.join(repr(kind) for kind in EXTRACTABLE_KINDS)})"
"""LanceDB filter of the segments retrieval returns (built from constants, not input)."""


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

    @property
    def fact_filter(self) -> tuple[datetime | None, bool]:
        return self.valid_at, self.speculative


@dataclass(frozen=True)
class FactVectors:
    """Normalised statement vectors: `matrix` row `index[fact_id]` for each stored fact."""

    index: dict[str, int]
    matrix: np.ndarray

    def rows(self, fact_ids: Sequence[str]) -> np.ndarray:
        """The vectors of `fact_ids`, in order (all must be stored)."""
        return self.matrix[[self.index[f] for f in fact_ids]]

    def extended(self, fact_ids: Sequence[str], vectors: np.ndarray) -> FactVectors:
        """These vectors plus `vectors` of the new, distinct `fact_ids`."""
        index = {**self.index, **{f: len(self.index) + i for i, f in enumerate(fact_ids)}}
        matrix = np.vstack([self.matrix, vectors]) if self.index else vectors
        return FactVectors(index, matrix.astype(np.float32, copy=False))


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
        """The LanceDB table of `kind` at the version the snapshot pinned."""
        if kind not in self.snapshot.lance_versions:
            raise LookupError(
                f"snapshot {self.snapshot.snapshot_id} pins no {kind!r} table "
                f"(it has {', '.join(self.snapshot.lance_versions)}); rebuild to add it"
            )
        table = self.db.open_table(lance_table_name(self.snapshot.collection, kind))
        table.checkout(self.snapshot.lance_versions[kind])
        return table

    @functools.cached_property
    def segments(self) -> pa.Table:
        table = self.table("segments").to_arrow()
        return table.drop_columns([c for c in VECTOR_COLUMNS if c in table.column_names])

    @functools.cached_property
    def segment_index(self) -> dict[str, int]:
        return {sid: i for i, sid in enumerate(self.segments.column("segment_id").to_pylist())}

    @functools.cached_property
    def segment_kinds(self) -> list[str]:
        """Kind of each segment, in `segments` row order."""
        return self.segments.column("kind").to_pylist()

    def segment_kind(self, segment_id: str) -> str:
        return self.segment_kinds[self.segment_index[segment_id]]

    @functools.cached_property
    def entities(self) -> pa.Table:
        return self.table("entities").to_arrow()

    @functools.cached_property
    def fact_vectors(self) -> FactVectors:
        """Statement vectors of the pinned facts table (empty if none), one matrix."""
        if "facts" not in self.snapshot.lance_versions:
            return FactVectors({}, np.zeros((0, 0), np.float32))
        table = self.table("facts").to_arrow().select(["fact_id", "vector"])
        ids = table.column("fact_id").to_pylist()
        if not ids:
            return FactVectors({}, np.zeros((0, 0), np.float32))
        flat = np.asarray(table.column("vector").combine_chunks().flatten(), np.float32)
        return FactVectors({f: i for i, f in enumerate(ids)}, flat.reshape(len(ids), -1))

    @functools.cached_property
    def alias_index(self) -> dict[str, str]:
        """Normalised alias -> entity id, for linking query text to entities."""
        index: dict[str, str] = {}
        for row in self.entities.select(["entity_id", "name", "aliases"]).to_pylist():
            for alias in [row["name"], *row["aliases"]]:
                key = normalize_name(alias)
                if key:
                    index.setdefault(key, row["entity_id"])
        return index

    def facts(self, query: QueryContext) -> list[dict[str, Any]]:
        """Facts of the snapshot for the query's valid time and stability filter.

        One query per valid time fetches every confidence; the stable list filters it,
        so a speculative and a normal query share their fact rows (at a million facts
        the rows, not the matrices, are what fills memory)."""
        key = ("facts", *query.fact_filter)
        if key not in self.cache:
            every = ("facts", query.valid_at, True)
            if every not in self.cache:
                as_of = AsOf(valid_at=query.valid_at, known_at=self.snapshot.recorded_cutoff)
                with self.reading() as con:
                    self.cache[every] = facts_as_of(con, self.snapshot.collection, as_of)
            if not query.speculative:
                self.cache[key] = [f for f in self.cache[every] if f["stable"]]
        return self.cache[key]

    def facts_by_segment(self, query: QueryContext) -> dict[str, list[dict[str, Any]]]:
        """The query's facts indexed by the segments that support them."""
        key = ("facts_by_segment", *query.fact_filter)
        if key not in self.cache:
            index: dict[str, list[dict[str, Any]]] = {}
            for fact in self.facts(query):
                for segment_id in fact["source_segment_ids"]:
                    index.setdefault(segment_id, []).append(fact)
            self.cache[key] = index
        return self.cache[key]

    def embed_query(self, text: str, model: str | None = None) -> np.ndarray:
        """The query's vector under `model` (default: the snapshot's encoder), embedded in
        the query role; the last one per model is kept, as a strategy's helpers embed the
        same query text several times."""
        model = model or self.snapshot.embedding_model
        key = ("last_query_vector", model)
        last = self.cache.get(key)
        if last is None or last[0] != text:
            last = (text, encode([text], model, role="query")[0])
            self.cache[key] = last
        return last[1].copy()

    @functools.cached_property
    def fusion_encoder(self) -> str | None:
        """The second encoder whose vectors the pinned segments table holds, else None."""
        model = self.snapshot.fusion_encoder
        if model is None or VECTOR_FUSION not in self.table("segments").schema.names:
            return None
        return model

    def segment(self, segment_id: str) -> dict[str, Any]:
        return self.segments.slice(self.segment_index[segment_id], 1).to_pylist()[0]
