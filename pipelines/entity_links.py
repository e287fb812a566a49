"""Stage 7b: the untyped entity links of the passage graph (`transforms.entity_links`):
co-occurrence within KGERMAR's window where no typed fact joins a pair, and synonym names
found through the LanceDB index of entity-name vectors (written by `graph_embeddings`).
The links go to a LanceDB table that the snapshot pins."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import lancedb
import numpy as np
import pyarrow as pa
from lancedb.index import IvfFlat

from pipelines.outcome import StageOutcome, unchanged
from schemas.tables import LANCE_ENTITY_LINKS, VECTOR
from stores.lance_tables import entity_id_vectors, has_table, replace_table
from stores.stage_inputs import mention_windows, typed_pairs
from stores.warehouse import WarehouseStore
from stores.workspace import lance_table_name
from transforms.entity_links import (
    SYNONYM_NEIGHBOURS,
    cooccurrence_links,
    inputs_digest,
    link_counts,
    synonym_links,
)
from transforms.ids import content_id

QUERY_BATCH = 1024
"""Name vectors per batched nearest-neighbour query."""
NAME_INDEX_MIN_ROWS = 2048
"""From this many names, the search goes through an IVF_FLAT index (sqrt(n) partitions,
`NPROBES` probed; flat vectors inside a partition, so distances are exact). On MuSiQue's
9,476 names: 0.6 s to index and 1.1 s to search against 13 s for the flat scan, and 1,439
of the 1,440 synonym pairs the flat scan finds (8 probes: 1,434; 4: 1,407)."""
NPROBES = 16


@dataclass(frozen=True)
class EntityLinksOutcome:
    """What the stage wrote: the links by kind, the names searched, the table version."""

    by_kind: dict[str, int]
    names: int
    written: int
    version: int


STAGE = "entity_links"


def run(warehouse: WarehouseStore, collection: str) -> StageOutcome:
    """Compute and store the collection's entity links from its mentions and facts;
    skipped while what they are computed from is unchanged (`inputs_digest`) and the
    links table is there. The synonym search over an IVF index is approximate and the
    index's partitions are drawn anew at each build (1,439 of MuSiQue's 1,440 synonym
    pairs found, which one missed varying), so recomputing unchanged inputs could change
    a link and with it the snapshot."""
    db = warehouse.workspace.lance()
    mentions = mention_windows(warehouse, collection)
    typed = typed_pairs(warehouse, collection)
    entity_of = warehouse.entity_of(collection)
    ids, vectors = entity_id_vectors(db, lance_table_name(collection, "names"))
    fingerprint = content_id(
        inputs_digest(mentions, typed, entity_of, ids, vectors), NAME_INDEX_MIN_ROWS, NPROBES
    )
    if warehouse.fingerprint_unchanged(collection, STAGE, fingerprint) and has_table(
        db, lance_table_name(collection, "links")
    ):
        return unchanged()
    linked = link_entities(mentions, typed, entity_of, db, collection, (ids, vectors))
    warehouse.record_fingerprint(collection, STAGE, fingerprint)
    return StageOutcome(
        rows_in=linked.names,
        rows_out=sum(linked.by_kind.values()),
        skipped=linked.written == 0,
        details={"links_by_kind": linked.by_kind, "links_version": linked.version},
    )


def link_entities(
    mentions: Sequence[Mapping[str, Any]],
    typed: Sequence[tuple[str, str]],
    entity_of: Mapping[str, str],
    db: lancedb.DBConnection,
    collection: str,
    names: tuple[list[str], np.ndarray] | None = None,
) -> EntityLinksOutcome:
    """Co-occurrences of `mentions` (rows with surface, segment, offsets) whose pair no
    `typed` fact joins, and synonyms among the collection's entity names, written to its
    links table; `entity_of` resolves a normalised name to its entity. `names`: the names
    table's (ids, vectors) where the caller has read them already."""
    links = cooccurrence_links(mentions, entity_of, typed)
    table = lance_table_name(collection, "names")
    ids, vectors = names if names is not None else entity_id_vectors(db, table)
    if ids:
        links += synonym_links(_neighbours(db, table, ids, vectors))
    sync = replace_table(
        db,
        lance_table_name(collection, "links"),
        pa.Table.from_pylist(links, schema=LANCE_ENTITY_LINKS),
        "link_id",
    )
    return EntityLinksOutcome(dict(link_counts(links)), len(ids), sync.added, sync.version)


def _neighbours(
    db: lancedb.DBConnection, name: str, ids: list[str], vectors: np.ndarray
) -> Iterator[tuple[str, str, float]]:
    """(entity id, neighbour id, cosine) of each name's nearest names, by batched queries
    on an IVF_FLAT index of the names (a flat scan below `NAME_INDEX_MIN_ROWS`). Vectors are
    unit length, so cosine = 1 - squared L2 / 2, the index's own metric."""
    table = db.open_table(name)
    if len(ids) >= NAME_INDEX_MIN_ROWS:
        partitions = max(1, round(math.sqrt(len(ids))))
        table.create_index(
            VECTOR, config=IvfFlat(distance_type="l2", num_partitions=partitions), replace=True
        )
    for start in range(0, len(ids), QUERY_BATCH):
        found = (
            table.search(list(vectors[start : start + QUERY_BATCH]), vector_column_name=VECTOR)
            .distance_type("l2")
            .nprobes(NPROBES)
            .limit(SYNONYM_NEIGHBOURS + 1)
            .select(["entity_id", "_distance"])
            .to_arrow()
        )
        queries = (
            found.column("query_index").to_pylist()
            if "query_index" in found.column_names  # LanceDB leaves it out for one query
            else [0] * found.num_rows
        )
        for query, neighbour, distance in zip(
            queries,
            found.column("entity_id").to_pylist(),
            found.column("_distance").to_pylist(),
            strict=True,
        ):
            yield ids[start + query], neighbour, 1.0 - distance / 2.0
