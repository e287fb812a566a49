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

Incremental training (`warm_start_plan`): a rebuild whose graph changed a little starts
from the previous run's weights (`TrainedModel`) and trains `warm_epochs` instead of the
full count. The issue left two designs open (warm start on the affected neighbourhoods,
or a refresh with a staleness bound); this is the second, with warm starts in between:
- the change of a run is the share of distinct (head, relation, tail) triples added or
  removed against the triples the previous weights were trained on; the drift is that
  change summed over the warm runs since the last cold one;
- a run whose drift would exceed `staleness` trains cold (fresh initialisation, all
  epochs), and so does one whose configuration differs from the previous run's, whose
  relation count switches basis decomposition on or off, or that has no previous run;
- relation types are open-ended (a new passage can bring a new verb), so the weights of
  each type the previous run knew are carried over by name and a new type starts from
  its fresh initialisation;
- every epoch of a warm run still passes messages over the whole graph (R-GCN layers
  need every neighbour), so what it saves is epochs, not the cost of one;
- new entities need no training to get a vector: the encoder is inductive (its input is
  the text vector), so entity changes do not count towards the drift.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:  # torch is imported on training only: readers of HASH_COLUMN need none
    from transforms.rgcn import RGCNConfig, RGCNResult

HASH_COLUMN = "graph_hash"


@dataclass(frozen=True)
class TrainedModel:
    """What a later warm start needs of a training run: its weights, the relation types
    they index (in order), the configuration's digest, the triples trained on (sorted
    64-bit keys) and the drift since the last cold run."""

    state: dict[str, np.ndarray]
    relations: list[str]
    config_digest: str
    triple_keys: np.ndarray
    drift: float


@dataclass(frozen=True)
class StructuralBank:
    """Rows of the structure table and how they were trained."""

    rows: pa.Table
    graph_hash: str
    result: RGCNResult
    n_facts: int
    relations: list[str]
    model: TrainedModel
    """This run's weights and drift, to keep for the next run."""
    change: float
    """Share of triples added or removed against the run warm-started from (0 if cold)."""


def triple_keys(triples: Sequence[tuple[str, str, str]]) -> np.ndarray:
    """Sorted distinct 64-bit keys of (head, relation, tail) triples."""
    keys = [
        int.from_bytes(hashlib.blake2b("\x1f".join(t).encode(), digest_size=8).digest(), "big")
        for t in triples
    ]
    return np.unique(np.array(keys, dtype=np.uint64))


def config_digest(config: RGCNConfig) -> str:
    return hashlib.sha256(json.dumps(config.as_dict(), sort_keys=True).encode()).hexdigest()


def warm_start_plan(
    previous: TrainedModel | None,
    relations: list[str],
    keys: np.ndarray,
    config: RGCNConfig,
    staleness: float,
) -> tuple[TrainedModel | None, float]:
    """(the run to warm-start from, or None to train cold; this run's change against it).
    See the module docstring for the rule."""
    from transforms.rgcn import uses_bases

    if staleness <= 0 or previous is None or previous.config_digest != config_digest(config):
        return None, 0.0
    if uses_bases(len(previous.relations), config) != uses_bases(len(relations), config):
        return None, 0.0
    change = len(np.setxor1d(previous.triple_keys, keys)) / max(len(previous.triple_keys), 1)
    if previous.drift + change > staleness:
        return None, 0.0
    return previous, change


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
    previous: TrainedModel | None = None,
    staleness: float = 0.0,
    warm_epochs: int | None = None,
) -> StructuralBank:
    """Train the R-GCN on `facts` over the entities (`vectors`: their text embeddings, one
    row per id) and return the structure-table rows; warm-started from `previous` when
    `warm_start_plan` allows (`staleness` 0: always cold)."""
    from transforms.rgcn import train_rgcn

    ids = list(entity_ids)
    triples = fact_triples(facts, ids)
    position = {e: i for i, e in enumerate(ids)}
    relations = sorted({r for _, r, _ in triples})
    relation_index = {r: i for i, r in enumerate(relations)}
    heads = np.array([position[h] for h, _, _ in triples], dtype=np.int64)
    rels = np.array([relation_index[r] for _, r, _ in triples], dtype=np.int64)
    tails = np.array([position[t] for _, _, t in triples], dtype=np.int64)
    text = np.asarray(vectors, dtype=np.float32).reshape(len(ids), -1)
    keys = triple_keys(triples)
    start, change = warm_start_plan(previous, relations, keys, config, staleness)
    result = train_rgcn(
        heads,
        rels,
        tails,
        len(ids),
        text,
        config,
        n_relations=len(relations),
        warm_start=start.state if start else None,
        epochs=warm_epochs if start else None,
        relation_map=_relation_map(start.relations, relations) if start else None,
    )
    digest = graph_hash(ids, text, triples, config)
    model = TrainedModel(
        result.state, relations, config_digest(config), keys, start.drift + change if start else 0.0
    )
    rows = pa.table(
        {
            "entity_id": pa.array(ids, pa.string()),
            "structural": _fixed_size(result.structural),
            "vector": _fixed_size(result.fused),
            "gate": pa.array(result.gate, pa.float32()),
            HASH_COLUMN: pa.array([digest] * len(ids), pa.string()),
        }
    )
    return StructuralBank(rows, digest, result, len(triples), relations, model, change)


def _relation_map(previous: list[str], relations: list[str]) -> np.ndarray | None:
    """Each relation type's index among `previous` (-1: new); None when they are equal."""
    if previous == relations:
        return None
    index = {r: i for i, r in enumerate(previous)}
    return np.array([index.get(r, -1) for r in relations], np.int64)


def _fixed_size(matrix: np.ndarray) -> pa.FixedSizeListArray:
    flat = pa.array(np.ascontiguousarray(matrix, dtype=np.float32).reshape(-1), pa.float32())
    return pa.FixedSizeListArray.from_arrays(flat, matrix.shape[1])
