"""Cheap change detection over a collection's input files, and the record of the last build.

A file's fingerprint is (path, size, mtime_ns): reading it costs one `stat`, and any edit,
addition, removal or rename changes it. A collection's fingerprint is the digest of its
files' fingerprints, taken with the same file walk the loader uses (hidden files skipped).
A build that completes records the fingerprint its inputs had when it *started* as the
`stage_state` row (collection, BUILT_STAGE): a file changed during the build then still
differs from the record, so the next nightly run rebuilds it. The schedule compares the
current fingerprint with this record, and a resumed backfill skips partitions whose record
matches ("done").
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path

from dagster_project.resources import WarehouseResource
from transforms.loaders import iter_input_files

BUILT_STAGE = "collection_build"
"""`stage_state` stage name under which a completed build records its inputs' fingerprint."""

FINGERPRINT_TAG = "kgmem/inputs_fingerprint"
"""Run tag carrying the inputs' fingerprint a scheduled or sensed run was requested for."""


def file_fingerprints(inputs: Iterable[str | Path]) -> list[tuple[str, int, int]]:
    """(absolute path, size, mtime_ns) of every file a build of `inputs` would read, sorted."""
    rows = []
    for path in iter_input_files(inputs):
        try:
            stat, where = path.stat(), path.resolve()
        except (OSError, RuntimeError):  # a looping or dangling link: the link itself
            stat, where = path.lstat(), path.absolute()
        rows.append((str(where), stat.st_size, stat.st_mtime_ns))
    return sorted(rows)


def digest(fingerprints: Iterable[tuple[str, int, int]]) -> str:
    """One hex digest of a list of file fingerprints (order-independent)."""
    payload = json.dumps(sorted(list(f) for f in fingerprints))
    return hashlib.sha256(payload.encode()).hexdigest()


def inputs_fingerprint(inputs: Iterable[str | Path]) -> str:
    """The fingerprint of a collection's inputs (raises FileNotFoundError if one is missing)."""
    return digest(file_fingerprints(inputs))


def last_built(warehouse: WarehouseResource, collection: str) -> str | None:
    """The inputs' fingerprint recorded by the collection's last completed build, if any."""
    rows = warehouse.rows(
        "SELECT input_fingerprint FROM stage_state WHERE collection = ? AND stage = ?",
        [collection, BUILT_STAGE],
    )
    return rows[0]["input_fingerprint"] if rows else None


def record_built(warehouse: WarehouseResource, collection: str, fingerprint: str) -> None:
    """Record that a build of `collection` over inputs with `fingerprint` completed."""
    warehouse.record_fingerprint(collection, BUILT_STAGE, fingerprint)


def pending_collections(
    warehouse: WarehouseResource, collections: Iterable[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """Split `collections` (registered in the warehouse) into those whose inputs changed since
    their last completed build ({name: current fingerprint}) and those that cannot be checked
    ({name: reason}); unchanged collections are in neither."""
    changed: dict[str, str] = {}
    unusable: dict[str, str] = {}
    for name in collections:
        try:
            fingerprint = inputs_fingerprint(warehouse.inputs_of(name))
        except (FileNotFoundError, ValueError) as exc:
            unusable[name] = str(exc)
            continue
        if last_built(warehouse, name) != fingerprint:
            changed[name] = fingerprint
    return changed, unusable


def registered_collections(warehouse: WarehouseResource) -> list[str]:
    """Names of the collections registered in the warehouse (with their inputs), sorted."""
    return [r["name"] for r in warehouse.rows("SELECT name FROM collections ORDER BY name")]
