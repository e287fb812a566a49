"""Keeping the LanceDB "structure" table (KGERMAR's structural bank) in step with the graph.

The table holds, per entity, the R-GCN embedding (`structural`), the fused text–graph
vector (`vector`, searched by the structural bank) and the `graph_hash` of the training
inputs. The R-GCN is retrained and the table overwritten only when that hash changes (a
different fact set, entity set, text vectors or training configuration), so an unchanged
rebuild keeps the table version and therefore the snapshot id.

The table is only ever overwritten, never dropped: a collection left with no entities gets
an empty version of it. Dropping it deleted the versions that earlier snapshots pin, and a
later build then made a new table whose version numbers started again, so an old
snapshot's pinned version could name another build's rows.

The weights of the last run are kept beside the workspace's tables
(`<data>/models/rgcn/<collection>.npz`, under the data URL when the workspace has one: the
state arrays, the relation types they index, the configuration digest, the trained
triples' keys and the drift), so the next run, on whichever host, can warm-start from them
(`transforms.structural_bank.warm_start_plan`). A missing or unreadable file means a cold
start, never a failed build.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lancedb
import numpy as np

from stores.data_url import read_bytes, write_bytes
from stores.lance_tables import entity_id_vectors
from transforms.rgcn import RGCNConfig
from transforms.structural_bank import (
    HASH_COLUMN,
    StructuralBank,
    TrainedModel,
    fact_triples,
    graph_hash,
    structural_rows,
)


@dataclass(frozen=True)
class StructureSync:
    """What the sync did: the table version after it, the hash, and the training run
    (None when the stored table was already current or there are no entities)."""

    version: int | None
    graph_hash: str
    bank: StructuralBank | None


def entity_vectors(
    db: lancedb.DBConnection, name: str, contexts: str | None = None
) -> tuple[list[str], np.ndarray]:
    """Entity ids (sorted) of the entities table `name` and their text vectors (KGERMAR's
    e_text): the context embedding from table `contexts` where the entity has one, else
    its description embedding (an entity known only from an LLM triplet or a speaker)."""
    ids, vectors = entity_id_vectors(db, name)
    if contexts is None or not ids or _open(db, contexts) is None:
        return ids, vectors
    context_ids, context_vectors = entity_id_vectors(db, contexts)
    row = {e: i for i, e in enumerate(context_ids)}
    for i, entity in enumerate(ids):
        if entity in row:
            vectors[i] = context_vectors[row[entity]]
    return ids, vectors


def sync_structure(
    db: lancedb.DBConnection,
    name: str,
    entity_ids: Sequence[str],
    vectors: np.ndarray,
    facts: Sequence[Mapping[str, Any]],
    config: RGCNConfig,
    warm: WarmStartSettings | None = None,
) -> StructureSync:
    """Make table `name` hold the structural bank of these entities and facts (trained
    warm from the weights at `warm.model_path` when the drift allows)."""
    digest = graph_hash(entity_ids, vectors, fact_triples(facts, entity_ids), config)
    existing = _open(db, name)
    if existing is not None and _stored_hashes(existing) == {digest}:
        return StructureSync(existing.version, digest, None)
    if not entity_ids:
        if existing is None:
            return StructureSync(None, digest, None)
        emptied = db.create_table(name, existing.schema.empty_table(), mode="overwrite")
        return StructureSync(emptied.version, digest, None)
    previous = load_trained(warm.model_path) if warm else None
    bank = structural_rows(
        entity_ids,
        vectors,
        facts,
        config,
        previous,
        warm.staleness if warm else 0.0,
        warm.epochs if warm else None,
    )
    table = db.create_table(name, bank.rows, mode="overwrite")
    if warm:
        save_trained(warm.model_path, bank.model)
    return StructureSync(table.version, digest, bank)


@dataclass(frozen=True)
class WarmStartSettings:
    """Where a collection's last R-GCN weights live, the drift bound before a cold run
    and the epochs of a warm one."""

    model_path: str | Path
    """A location of `stores.data_url`: a local path or a URL."""
    staleness: float
    epochs: int


def load_trained(path: str | Path) -> TrainedModel | None:
    """The weights saved at `path`, or None when there are none or they cannot be read."""
    try:
        data = read_bytes(str(path))
        if data is None:
            return None
        with np.load(io.BytesIO(data), allow_pickle=False) as saved:
            meta = json.loads(str(saved["meta"]))
            state = {
                k.removeprefix("state/"): saved[k] for k in saved.files if k.startswith("state/")
            }
            return TrainedModel(
                state, meta["relations"], meta["config_digest"], saved["triple_keys"], meta["drift"]
            )
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        return None


def save_trained(path: str | Path, model: TrainedModel) -> None:
    """Write `model` to `path` atomically (a crash leaves the previous file or none)."""
    meta = {
        "relations": model.relations,
        "config_digest": model.config_digest,
        "drift": model.drift,
    }
    arrays = {f"state/{k}": v for k, v in model.state.items()}
    buffer = io.BytesIO()
    np.savez(buffer, meta=np.array(json.dumps(meta)), triple_keys=model.triple_keys, **arrays)
    write_bytes(str(path), buffer.getvalue())


def _open(db: lancedb.DBConnection, name: str) -> lancedb.table.Table | None:
    try:
        return db.open_table(name)
    except ValueError:  # LanceDB: "Table ... was not found"
        return None


def _stored_hashes(table: lancedb.table.Table) -> set[str]:
    if HASH_COLUMN not in table.schema.names:
        return set()
    return set(table.to_arrow().column(HASH_COLUMN).to_pylist())
