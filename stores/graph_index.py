"""A snapshot's graph index on disk: computed once, written atomically, memory-mapped by
every query process that opens the snapshot.

Layout of `<home>/graph_index/<snapshot_id>/`:
- `entity_rows.arrow`, `segment_rows.arrow`: the pinned entities and segments tables
  without their vectors (what a query reads of them, mapped instead of read from
  LanceDB); `alias_keys.arrow`: normalised names and aliases with their entity;
  `passage_nodes.arrow`: the passage graph's node ids (Arrow IPC files, uncompressed so
  they map without a copy);
- `facts.arrow`: every fact version the snapshot sees (`stores.fact_queries`, known at
  the snapshot's recorded cutoff, any valid time and confidence);
- one `.npy` per array: fact ends, confidence, stability, valid interval, statement
  vectors, each entity's passage node, each turn's next turn, the segments' and entities'
  vectors, and the CSR parts of the mention, support and segment – node matrices;
- the IVF indexes of the fact and entity vectors where they are large enough to have one
  (`transforms.vector_lists`), four `.npy` each: `<name>_centroids`, `_offsets`,
  `_order`, `_vectors`, for `<name>` in `VECTOR_LISTS`. They are optional: a folder
  written before them (or of a small snapshot) has none, and its queries multiply every
  vector as they did;
- optional files added after format 4 came out (an index without them still opens, and
  the query process computes what they hold, as before they were stored):
  `entity_unit_vectors.npy` (the entities' vectors scaled to unit length, REAL's and
  PersonalAI's node vectors), and of the default query coordinates (now, not
  speculative) the graph's entity – fact incidence and fact support
  (`default_entity_facts_*.npy`, `default_fact_segments_*.npy`) and MemORAI's structure
  (`memorai_adjacency_*.npy`, `memorai_expansion_*.npy`, `memorai_structure_ones.npy`),
  and `search_edge_vectors.npy` (the statement vectors in the order of REAL's search
  graph's entity – fact incidence, `transforms.graph_index.search_edge_facts`), and the
  segments' BM25 postings (`transforms.lexical`): `lexical_terms.arrow` and
  `lexical_offsets.npy`, `_rows`, `_counts`, `_lengths`;
- `manifest.json`, written last: format version, snapshot id and counts. A folder without
  it is incomplete and never read.

The folder is written under a temporary name and renamed into place, so a reader sees a
whole index or none, and it is never rewritten: like the snapshot it belongs to, an
index is immutable (two builds racing to write it keep the first).

With a data URL (`stores.data_url`) the index lives at `<data URL>/graph_index/<id>/`.
The build writes it as above into the workspace's local cache,
`<home>/cache/graph_index/<id>/`, then uploads its files with `manifest.json` last, so
an upload cut short is incomplete and redone by the next build. A query process on any
host downloads a snapshot's index once into its own cache (into a staging folder renamed
into place, manifest last, as a write is) and maps it from there: an index never changes,
so a cached copy never goes stale, and memory-mapping needs a local file.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import duckdb
import lancedb
import numpy as np
import pyarrow as pa
import scipy.sparse as sp

from stores.data_url import download_folder, join, read_bytes, upload_folder
from stores.fact_queries import AsOf, facts_table_as_of
from stores.pinned_table import open_pinned
from stores.snapshots import Snapshot
from stores.workspace import Workspace, lance_table_name
from transforms.graph_index import (
    Embed,
    GraphIndex,
    build_graph_index,
    search_edge_facts,
    with_vector_lists,
)
from transforms.lexical import ARRAY_FIELDS, LexicalIndex
from transforms.vector_lists import VectorLists

FORMAT_VERSION = 4
MANIFEST = "manifest.json"
ARRAYS = (
    "fact_head",
    "fact_tail",
    "fact_confidence",
    "fact_stable",
    "fact_valid_from",
    "fact_valid_to",
    "fact_vectors",
    "entity_node",
    "next_segment",
    "segment_vectors",
    "entity_vectors",
)
OPTIONAL_ARRAYS = ("entity_unit_vectors", "search_edge_vectors")
"""Arrays added to the index after format 4 came out: written when the index has them,
mapped when the folder has them; an index without them still opens (the query process
computes them then, as it did before they were stored)."""
OPTIONAL_STRUCTURES = {"memorai_structure": ("memorai_adjacency", "memorai_expansion")}
"""Tuples of square 0/1 CSR matrices added after format 4 (`<file>_indptr.npy`,
`<file>_indices.npy` per matrix, and `<field>_ones.npy`, written last, for their values),
optional as `OPTIONAL_ARRAYS` are."""
TABLES = ("entity_rows", "segment_rows", "alias_keys", "facts")
"""Arrow IPC files of the index (`<name>.arrow`)."""
MATRICES = ("mentions", "fact_segments", "segment_nodes")
VECTOR_LISTS = ("fact_lists", "entity_lists")
"""Optional IVF indexes of the index (`GraphIndex` fields), four `.npy` files each."""
LIST_PARTS = ("centroids", "offsets", "order", "vectors")


def graph_index_dir(workspace: Workspace, snapshot_id: str) -> Path:
    """The local folder the snapshot's index is mapped from: in the shared data when it is
    local, else the workspace's download cache."""
    if workspace.data_is_remote:
        return workspace.root / "cache" / "graph_index" / snapshot_id
    return Path(workspace.data) / "graph_index" / snapshot_id


def graph_index_url(workspace: Workspace, snapshot_id: str) -> str | None:
    """Where the snapshot's index lives under the data URL (None: the data is local)."""
    if not workspace.data_is_remote:
        return None
    return join(workspace.data, "graph_index", snapshot_id)


def has_graph_index(workspace: Workspace, snapshot_id: str) -> bool:
    """Whether the workspace holds a complete index of the snapshot (where it is shared)."""
    url = graph_index_url(workspace, snapshot_id)
    if url is None:
        return is_complete(graph_index_dir(workspace, snapshot_id))
    return _current(read_bytes(join(url, MANIFEST)))


def store_graph_index(workspace: Workspace, index: GraphIndex, snapshot_id: str) -> bool:
    """Write `index` to the workspace unless a complete one is there; whether it wrote.
    With a data URL it is written to the local cache, then uploaded manifest last."""
    wrote = write_graph_index(graph_index_dir(workspace, snapshot_id), index, snapshot_id)
    url = graph_index_url(workspace, snapshot_id)
    if url is None:
        return wrote
    if has_graph_index(workspace, snapshot_id):
        return False
    upload_folder(graph_index_dir(workspace, snapshot_id), url, MANIFEST)
    return True


def fetch_graph_index(workspace: Workspace, snapshot_id: str) -> Path | None:
    """The local folder holding the snapshot's complete index, downloaded from the data URL
    into the cache at first use; None when the workspace has no complete index of it."""
    directory = graph_index_dir(workspace, snapshot_id)
    url = graph_index_url(workspace, snapshot_id)
    if is_complete(directory):
        return directory
    if url is None or not has_graph_index(workspace, snapshot_id):
        return None
    staging = _staging(directory)
    download_folder(url, staging, MANIFEST)
    _publish(staging, directory)
    return directory


def compute_graph_index(
    con: duckdb.DuckDBPyConnection, db: lancedb.DBConnection, snapshot: Snapshot, embed: Embed
) -> GraphIndex:
    """The index of `snapshot` from its pinned LanceDB tables and its facts as known at its
    recorded cutoff (statements the facts table lacks are embedded with `embed`)."""
    entities = _pinned(db, snapshot, "entities")
    segments = _pinned(db, snapshot, "segments")
    facts = facts_table_as_of(con, snapshot.collection, AsOf(None, snapshot.recorded_cutoff))
    return build_graph_index(entities, segments, facts, _stored_vectors(db, snapshot), embed)


def write_graph_index(directory: Path, index: GraphIndex, snapshot_id: str) -> bool:
    """Write `index` to `directory` unless a complete one is there; whether it wrote."""
    if is_complete(directory):
        return False
    staging = _staging(directory)
    staging.mkdir()
    for name in TABLES:
        _write_arrow(staging / f"{name}.arrow", getattr(index, name))
    _write_arrow(staging / "passage_nodes.arrow", pa.table({"node_id": index.node_ids}))
    for name in ARRAYS:
        np.save(staging / f"{name}.npy", np.ascontiguousarray(getattr(index, name)))
    write_vector_lists(staging, index)
    _write_optional_arrays(staging, index)
    _write_optional_structures(staging, index)
    _write_lexical(staging, index)
    _write_default_graph(staging, index)
    for name in MATRICES:
        _write_csr(staging, name, getattr(index, name))
    manifest = {
        "format_version": FORMAT_VERSION,
        "snapshot_id": snapshot_id,
        "entities": len(index.entity_ids),
        "segments": len(index.segment_ids),
        "facts": index.n_facts,
        "mentions": int(index.mentions.nnz),
        "fact_segments": int(index.fact_segments.nnz),
        "passage_nodes": len(index.node_ids),
    }
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=1))
    return _publish(staging, directory)


def write_vector_lists(directory: Path, index: GraphIndex) -> None:
    """Write the IVF indexes of `index` into `directory` (`with_vector_lists`: built from
    its arrays where it lacks them). Part of every write; also run alone on an existing
    index's arrays into another folder, to measure an index built before them."""
    index = with_vector_lists(index)
    for name in VECTOR_LISTS:
        lists: VectorLists | None = getattr(index, name)
        if lists is not None:
            for part in LIST_PARTS:
                np.save(
                    directory / f"{name}_{part}.npy", np.ascontiguousarray(getattr(lists, part))
                )


def read_vector_lists(directory: Path, name: str) -> VectorLists | None:
    """The IVF index `name` in `directory`, memory-mapped; None where it has none."""
    paths = {part: directory / f"{name}_{part}.npy" for part in LIST_PARTS}
    if not all(path.is_file() for path in paths.values()):
        return None
    return VectorLists(**{part: np.load(path, mmap_mode="r") for part, path in paths.items()})


def _write_optional_arrays(directory: Path, index: GraphIndex) -> None:
    for name in OPTIONAL_ARRAYS:
        array = getattr(index, name)
        if array is not None:
            np.save(directory / f"{name}.npy", np.ascontiguousarray(array))
    if index.search_edge_vectors is None:
        _write_search_edge_vectors(directory / "search_edge_vectors.npy", index)


SEARCH_EDGE_CHUNK = 1 << 16
"""Rows of `search_edge_vectors` gathered and written at a time (96 MB at 384 floats)."""


def _write_search_edge_vectors(path: Path, index: GraphIndex) -> None:
    """`search_edge_vectors` of an index that has only `fact_vectors` (a build's), written
    in chunks through a mapping of the new file: the whole (3 GB at 1M facts, twice the
    statement matrix) is never in memory."""
    facts = search_edge_facts(index)
    vectors = index.fact_vectors
    target = np.lib.format.open_memmap(
        path, mode="w+", dtype=vectors.dtype, shape=(len(facts), vectors.shape[1])
    )
    for start in range(0, len(facts), SEARCH_EDGE_CHUNK):
        chunk = facts[start : start + SEARCH_EDGE_CHUNK]
        target[start : start + len(chunk)] = vectors[chunk]
    target.flush()
    del target


def _write_csr(directory: Path, name: str, matrix: sp.csr_matrix) -> None:
    """A 0/1 CSR matrix as its index arrays (its values are all 1)."""
    index_type = np.int32 if max(matrix.nnz, *matrix.shape) < 2**31 else np.int64
    np.save(directory / f"{name}_indptr.npy", matrix.indptr.astype(index_type))
    np.save(directory / f"{name}_indices.npy", matrix.indices.astype(index_type))


def _write_optional_structures(directory: Path, index: GraphIndex) -> None:
    for field, files in OPTIONAL_STRUCTURES.items():
        matrices = getattr(index, field)
        if matrices is not None:
            for name, matrix in zip(files, matrices, strict=True):
                _write_csr(directory, name, matrix)
            width = max(m.nnz for m in matrices)
            np.save(directory / f"{field}_ones.npy", np.ones(width))


def _write_lexical(directory: Path, index: GraphIndex) -> None:
    """`GraphIndex.lexical` as `lexical_<field>.npy` per array field (optional, as
    `OPTIONAL_ARRAYS`) and its terms, `lexical_terms.arrow`, written last."""
    if index.lexical is None:
        return
    for name in ARRAY_FIELDS:
        np.save(
            directory / f"lexical_{name}.npy", np.ascontiguousarray(getattr(index.lexical, name))
        )
    terms = pa.table({"term": pa.array(list(index.lexical.terms), pa.string())})
    _write_arrow(directory / "lexical_terms.arrow", terms)


def _read_lexical(directory: Path) -> dict[str, LexicalIndex]:
    """`lexical` with its arrays mapped and its terms read; {} when not stored."""
    path = directory / "lexical_terms.arrow"
    if not path.is_file():
        return {}
    arrays = {
        name: np.load(directory / f"lexical_{name}.npy", mmap_mode="r") for name in ARRAY_FIELDS
    }
    terms = _read_arrow(path).column("term").to_pylist()
    return {"lexical": LexicalIndex(terms, **arrays)}


DEFAULT_GRAPH = ("default_entity_facts", "default_fact_segments")
"""Files of `GraphIndex.default_graph` (optional, as `OPTIONAL_ARRAYS`): CSR parts, and
`default_entity_facts_data.npy` for the incidence's signs."""


def _write_default_graph(directory: Path, index: GraphIndex) -> None:
    if index.default_graph is None:
        return
    incidence, support = index.default_graph
    np.save(directory / f"{DEFAULT_GRAPH[0]}_data.npy", np.asarray(incidence.data, np.float64))
    _write_csr(directory, DEFAULT_GRAPH[1], support)
    _write_csr(directory, DEFAULT_GRAPH[0], incidence)  # its files' presence marks the whole


def _read_default_graph(
    directory: Path, n_entities: int, n_segments: int
) -> dict[str, tuple[sp.csr_matrix, sp.csr_matrix]]:
    """`default_graph` mapped, the incidence's values included; {} when not stored."""
    incidence, support = DEFAULT_GRAPH
    if not (directory / f"{incidence}_indices.npy").is_file():
        return {}
    n_facts = len(np.load(directory / f"{support}_indptr.npy", mmap_mode="r")) - 1
    signs = np.load(directory / f"{incidence}_data.npy", mmap_mode="r")
    return {
        "default_graph": (
            _read_csr(directory, incidence, (n_entities, n_facts), signs),
            _read_csr(directory, support, (n_facts, n_segments)),
        )
    }


def _read_optional_structures(directory: Path) -> dict[str, tuple[sp.csr_matrix, ...]]:
    """The optional square structures the folder holds, mapped, their values too: the
    matrices share one stored array of ones (`<field>_ones.npy`), of which a query reads
    the pages of the rows it slices, where filling 20M ones for MemORAI's two matrices
    took 0.9 s of the first query and 160 MB of memory at 1M facts."""
    found = {}
    for field, files in OPTIONAL_STRUCTURES.items():
        ones_path = directory / f"{field}_ones.npy"
        if ones_path.is_file():
            ones = np.load(ones_path, mmap_mode="r")
            sizes = [len(np.load(directory / f"{n}_indptr.npy", mmap_mode="r")) - 1 for n in files]
            found[field] = tuple(
                _read_csr(directory, name, (size, size), ones)
                for name, size in zip(files, sizes, strict=True)
            )
    return found


def _read_optional_arrays(directory: Path) -> dict[str, np.ndarray]:
    """The optional arrays the folder holds, mapped (an older index holds none)."""
    paths = {name: directory / f"{name}.npy" for name in OPTIONAL_ARRAYS}
    return {name: np.load(path, mmap_mode="r") for name, path in paths.items() if path.is_file()}


def _staging(directory: Path) -> Path:
    """A fresh staging folder of this process beside `directory` (the path only: made by
    whoever fills it), after clearing those that dead writers left."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_staging(directory)
    staging = directory.with_name(f".{directory.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    return staging


def _publish(staging: Path, directory: Path) -> bool:
    """Rename the complete `staging` folder to `directory`; False (and `staging` dropped)
    when another process put a complete one there first."""
    if directory.exists() and not is_complete(directory):  # not ours to keep: no manifest
        shutil.rmtree(directory, ignore_errors=True)
    try:
        staging.rename(directory)
    except OSError:  # another process put a whole index there first: keep it
        shutil.rmtree(staging, ignore_errors=True)
        if not is_complete(directory):
            raise
        return False
    return True


def _remove_stale_staging(directory: Path) -> None:
    """Staging folders of `directory` left by writers that died (killed mid-write)."""
    for staging in directory.parent.glob(f".{directory.name}.*.tmp"):
        pid = staging.name.removeprefix(f".{directory.name}.").removesuffix(".tmp")
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(staging, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def is_complete(directory: Path) -> bool:
    manifest = directory / MANIFEST
    return manifest.is_file() and _current(manifest.read_bytes())


def _current(manifest: bytes | None) -> bool:
    """Whether a manifest's content is there and of this format version."""
    return manifest is not None and json.loads(manifest).get("format_version") == FORMAT_VERSION


def read_graph_index(directory: Path) -> GraphIndex | None:
    """The index in `directory`, memory-mapped; None if there is no complete one."""
    if not is_complete(directory):
        return None
    tables = {name: _read_arrow(directory / f"{name}.arrow") for name in TABLES}
    n_entities, n_segments = tables["entity_rows"].num_rows, tables["segment_rows"].num_rows
    node_ids = _read_arrow(directory / "passage_nodes.arrow").column("node_id").combine_chunks()
    arrays = {name: np.load(directory / f"{name}.npy", mmap_mode="r") for name in ARRAYS}
    shape = {
        "mentions": (n_segments, n_entities),
        "fact_segments": (len(arrays["fact_head"]), n_segments),
        "segment_nodes": (n_segments, len(node_ids)),
    }
    matrices = {name: _read_csr(directory, name, shape[name]) for name in MATRICES}
    return GraphIndex(
        **tables,
        node_ids=node_ids,
        **arrays,
        **matrices,
        **{name: read_vector_lists(directory, name) for name in VECTOR_LISTS},
        **_read_optional_arrays(directory),
        **_read_optional_structures(directory),
        **_read_default_graph(directory, n_entities, n_segments),
        **_read_lexical(directory),
    )


def _stored_vectors(db: lancedb.DBConnection, snapshot: Snapshot) -> tuple[pa.Array, np.ndarray]:
    """(fact ids, statement vectors) of the snapshot's facts table; empty if it pins none."""
    if "facts" not in snapshot.lance_versions:
        return pa.array([], pa.string()), np.zeros((0, 0), np.float32)
    stored = _pinned(db, snapshot, "facts").select(["fact_id", "vector"])
    ids = stored.column("fact_id").combine_chunks()
    if not len(ids):
        return ids, np.zeros((0, 0), np.float32)
    vectors = np.asarray(stored.column("vector").combine_chunks().flatten(), np.float32)
    return ids, vectors.reshape(len(ids), -1)


def _pinned(db: lancedb.DBConnection, snapshot: Snapshot, kind: str) -> pa.Table:
    """The snapshot's `kind` table at its pinned version."""
    name = lance_table_name(snapshot.collection, kind)
    return open_pinned(db, name, snapshot.lance_versions[kind], snapshot.created_at).to_arrow()


def _write_arrow(path: Path, table: pa.Table) -> None:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _read_arrow(path: Path) -> pa.Table:
    """A mapped Arrow IPC file: its columns point into the file, nothing is copied."""
    return pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all()


def _read_csr(
    directory: Path, name: str, shape: tuple[int, int], ones: np.ndarray | None = None
) -> sp.csr_matrix:
    """A mapped CSR matrix; its values are `ones`' first entries (read-only) when given,
    else a fresh array of ones (a 0/1 matrix)."""
    indptr = np.load(directory / f"{name}_indptr.npy", mmap_mode="r")
    indices = np.load(directory / f"{name}_indices.npy", mmap_mode="r")
    data = ones[: len(indices)] if ones is not None else np.ones(len(indices))
    return sp.csr_matrix((data, indices, indptr), shape=shape)
