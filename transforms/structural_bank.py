"""KGERMAR's structural memory bank as table rows: entity id, R-GCN embedding, fused vector.

`structural_rows` turns the collection's current facts (entity ids and relation names)
and the entities' text vectors into the arrays `transforms.rgcn.train_rgcn` takes, trains,
and returns the Arrow rows of the LanceDB "structure" table with the training record.
`graph_hash` fingerprints everything the rows depend on (entity ids, text vectors, the
fact set, the training configuration), so a rebuild that changed none of them can keep
the stored table and its version. Every row carries that hash in `graph_hash`, the
column a snapshot's content hash reads.

Facts whose head or tail is not an entity of the table are dropped (the entity set is
the entities table's); duplicate (head, relation, tail) facts count once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from transforms.rgcn import RGCNConfig, RGCNResult, train_rgcn

HASH_COLUMN = "graph_hash"


@dataclass(frozen=True)
class StructuralBank:
    """Rows of the structure table and how they were trained."""

    rows: pa.Table
    graph_hash: str
    result: RGCNResult
    n_facts: int
    relations: list[str]


def fact_triples(
    facts: Sequence[Mapping[str, Any]], entity_ids: Sequence[str]
) -> list[tuple[str, str, str]]:
    """Sorted distinct (head id, relation, tail id) of the facts between known entities."""
    known = set(entity_ids)
    return sorted(
        {
            (f["head_entity_id"], f["relation"], f["tail_entity_id"])
            for f in facts
            if f["head_entity_id"] in known and f["tail_entity_id"] in known
        }
    )


def graph_hash(
    entity_ids: Sequence[str],
    vectors: np.ndarray,
    triples: Sequence[tuple[str, str, str]],
    config: RGCNConfig,
) -> str:
    """Fingerprint of the inputs of a training run (ids in order, vectors, facts, config)."""
    digest = hashlib.sha256()
    digest.update(json.dumps([list(entity_ids), [list(t) for t in triples]]).encode())
    digest.update(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
    digest.update(json.dumps(config.as_dict(), sort_keys=True).encode())
    return digest.hexdigest()


def structural_rows(
    entity_ids: Sequence[str],
    vectors: np.ndarray,
    facts: Sequence[Mapping[str, Any]],
    config: RGCNConfig,
) -> StructuralBank:
    """Train the R-GCN on `facts` over the entities (`vectors`: their text embeddings, one
    row per id) and return the structure-table rows."""
    ids = list(entity_ids)
    triples = fact_triples(facts, ids)
    position = {e: i for i, e in enumerate(ids)}
    relations = sorted({r for _, r, _ in triples})
    relation_index = {r: i for i, r in enumerate(relations)}
    heads = np.array([position[h] for h, _, _ in triples], dtype=np.int64)
    rels = np.array([relation_index[r] for _, r, _ in triples], dtype=np.int64)
    tails = np.array([position[t] for _, _, t in triples], dtype=np.int64)
    text = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
    result = train_rgcn(heads, rels, tails, len(ids), text, config, n_relations=len(relations))
    digest = graph_hash(ids, text, triples, config)
    rows = pa.table(
        {
            "entity_id": pa.array(ids, pa.string()),
            "structural": _fixed_size(result.structural),
            "vector": _fixed_size(result.fused),
            "gate": pa.array(result.gate, pa.float32()),
            HASH_COLUMN: pa.array([digest] * len(ids), pa.string()),
        }
    )
    return StructuralBank(rows, digest, result, len(triples), relations)


def _fixed_size(matrix: np.ndarray) -> pa.FixedSizeListArray:
    flat = pa.array(np.ascontiguousarray(matrix, dtype=np.float32).reshape(-1), pa.float32())
    return pa.FixedSizeListArray.from_arrays(flat, matrix.shape[1])
