"""The snapshots a server holds open, one `Memory` each, and which one `latest` means.

A request leases the `Memory` it starts on (`SnapshotPool.lease`) and keeps it until it
answers, so a build landing meanwhile never changes the snapshot under it. `latest`
follows the workspace: a watcher thread looks at the warehouse file's modification time
every `poll_s` seconds and, when it changed, lists the snapshots on a short read-only
connection (a build's writes wait at most that long for it, as they do for any reader)
and opens the newest before it serves it, so the first request on it finds it open. A
server started on a pinned snapshot never moves. Other snapshots a request names are
opened on demand and kept, the least recently used closed beyond `keep` once no request
holds them.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

from memory.memory import Memory
from stores.snapshots import Snapshot, list_snapshots
from stores.workspace import Workspace

LATEST = "latest"
"""The snapshot name that follows the newest snapshot of the workspace (or collection)."""

log = logging.getLogger("kgmem.serve")


class UnknownSnapshot(LookupError):
    """A request named a snapshot the workspace does not have."""


class SnapshotPool:
    """Open snapshots of one workspace, leased to requests; see the module docstring."""

    def __init__(
        self,
        home: str | Path | None,
        default: str = LATEST,
        collection: str | None = None,
        keep: int = 4,
        poll_s: float = 1.0,
        preload: bool = True,
    ) -> None:
        """`preload`: open the default snapshot now, so the first request finds it open
        (off for a pool that only resolves which snapshot is meant, as `kgmem serve
        --workers` does before its workers open their own)."""
        self.workspace = Workspace.at(home)
        self.collection = collection
        self.keep = keep
        self.poll_s = poll_s
        self._lock = threading.Lock()
        self._open: OrderedDict[str, Memory] = OrderedDict()
        self._leases: dict[str, int] = {}
        self._snapshots = self._list()
        self.pinned = None if default == LATEST else self._find(default).snapshot_id
        self.latest = self._newest(self._snapshots).snapshot_id
        if preload:
            self._memory(self.default_id, lease=False)
        self._stop = threading.Event()
        self._stamp = self._warehouse_stamp()
        self._watcher: threading.Thread | None = None

    @property
    def default_id(self) -> str:
        """The snapshot a request that names none is answered from."""
        return self.pinned or self.latest

    def snapshots(self) -> list[Snapshot]:
        """The workspace's snapshots as last listed, newest first."""
        return list(self._snapshots)

    def start_watching(self) -> None:
        """Follow new snapshots in a daemon thread (not for a pinned server)."""
        if self.pinned is None and self._watcher is None:
            self._watcher = threading.Thread(target=self._watch, name="kgmem-latest", daemon=True)
            self._watcher.start()

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            for memory in self._open.values():
                memory.close()
            self._open.clear()

    @contextlib.contextmanager
    def lease(self, name: str | None = None) -> Iterator[Memory]:
        """The open `Memory` of snapshot `name` (an id, `latest`, or None for the server's
        default), held for the block; `UnknownSnapshot` if there is no such snapshot."""
        if name is None:
            snapshot_id = self.default_id
        elif name == LATEST:
            snapshot_id = self.latest
        else:
            snapshot_id = self._find(name).snapshot_id
        memory = self._memory(snapshot_id)
        try:
            yield memory
        finally:
            with self._lock:
                self._leases[snapshot_id] -= 1
                self._evict()

    def refresh(self) -> bool:
        """List the snapshots again and move `latest` to the newest, opened first;
        whether it moved."""
        snapshots = self._list()
        newest = self._newest(snapshots).snapshot_id
        self._snapshots = snapshots
        if newest == self.latest:
            return False
        self._memory(newest, lease=False)
        self.latest = newest
        log.warning("serving snapshot %s as latest", newest)
        return True

    def _memory(self, snapshot_id: str, lease: bool = True) -> Memory:
        """The open `Memory` of `snapshot_id`, opened now if it is not; with `lease`,
        counted as held until `lease`'s block ends."""
        with self._lock:
            memory = self._open.get(snapshot_id)
            if memory is not None:
                self._open.move_to_end(snapshot_id)
                self._leases[snapshot_id] = self._leases.get(snapshot_id, 0) + lease
                return memory
        opened = Memory.open(self.workspace.root, snapshot=snapshot_id)
        with self._lock:
            memory = self._open.setdefault(snapshot_id, opened)
            self._leases[snapshot_id] = self._leases.get(snapshot_id, 0) + lease
            self._evict()
        if memory is not opened:  # another request opened it first
            opened.close()
        return memory

    def _evict(self) -> None:
        """Close the least recently used snapshots beyond `keep` that no request holds
        and that are neither the default nor latest (caller holds the lock)."""
        kept = {self.latest, self.pinned}
        for snapshot_id in list(self._open):
            if len(self._open) <= self.keep:
                return
            if snapshot_id not in kept and not self._leases.get(snapshot_id):
                self._open.pop(snapshot_id).close()

    def _find(self, name: str) -> Snapshot:
        for snapshots in (self._snapshots, None):
            if snapshots is None:  # not among those listed: a build may have added it
                snapshots = self._snapshots = self._list()
            for snapshot in snapshots:
                if snapshot.snapshot_id == name:
                    return snapshot
        raise UnknownSnapshot(f"no snapshot {name!r} in {self.workspace.root}")

    def _list(self) -> list[Snapshot]:
        with contextlib.closing(self.workspace.connect(read_only=True)) as con:
            return list_snapshots(con, self.collection)

    def _newest(self, snapshots: list[Snapshot]) -> Snapshot:
        if not snapshots:
            scope = f"collection {self.collection!r}" if self.collection else "the workspace"
            raise LookupError(
                f"no snapshot in {scope} at {self.workspace.root}; run `kgmem build` first"
            )
        return snapshots[0]

    def _warehouse_stamp(self) -> tuple[float, ...]:
        """Modification times of the warehouse file and its write-ahead log."""
        path = self.workspace.warehouse_path
        stamps = []
        for candidate in (path, path.with_name(path.name + ".wal")):
            try:
                stamps.append(candidate.stat().st_mtime)
            except FileNotFoundError:
                stamps.append(0.0)
        return tuple(stamps)

    def _watch(self) -> None:
        while not self._stop.wait(self.poll_s):
            stamp = self._warehouse_stamp()
            if stamp == self._stamp:
                continue
            try:
                self.refresh()
                self._stamp = stamp
            except Exception as exc:  # a half-written build: try again at the next poll
                log.warning("could not list snapshots (%s); retrying", exc)
