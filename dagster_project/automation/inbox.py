"""The inbox folder the sensor watches: one subfolder per collection.

`<inbox>/<name>/` holds the files of collection `<name>`; a subfolder containing a `.daily`
marker file holds conversation logs to be partitioned by day (`days.split_by_day`) into
collections `<name>-YYYY-MM-DD`, written under `<inbox>/.days/<name>/`. A folder whose name
is not a valid collection name is reported, never built; an empty one waits for files.
Hidden entries are ignored.

The sensor's cursor maps each collection to the digest of its files' fingerprints
(`fingerprints.digest` over path, size, mtime_ns): a digest rather than the file list keeps
the cursor small for large collections while detecting the same changes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from dagster_project.automation.days import day_collection, split_by_day
from dagster_project.automation.fingerprints import digest, file_fingerprints
from stores.workspace import check_collection_name, default_home

INBOX_ENV = "KGMEM_INBOX"
DAILY_MARKER = ".daily"
DAYS_FOLDER = ".days"


def inbox_folder(workspace_root: str | Path | None = None) -> Path:
    """`$KGMEM_INBOX`, else `<workspace>/inbox` (the workspace: `$KGMEM_HOME` unless given)."""
    configured = os.environ.get(INBOX_ENV)
    if configured:
        return Path(configured).resolve()
    return Path(workspace_root).resolve() / "inbox" if workspace_root else default_home() / "inbox"


@dataclass
class InboxScan:
    """What the inbox holds now: collection -> inputs and fingerprint, and rejected folders."""

    inputs: dict[str, list[str]] = field(default_factory=dict)
    fingerprints: dict[str, str] = field(default_factory=dict)
    invalid: dict[str, str] = field(default_factory=dict)

    def changed_since(self, cursor: dict[str, str]) -> list[str]:
        """Collections that are new or whose files changed since `cursor` was taken, sorted."""
        return sorted(n for n, f in self.fingerprints.items() if cursor.get(n) != f)

    def cursor(self) -> str:
        return json.dumps(self.fingerprints, sort_keys=True)


def parse_cursor(cursor: str | None) -> dict[str, str]:
    """The per-collection fingerprints of a sensor cursor (empty for none or garbage)."""
    try:
        value = json.loads(cursor) if cursor else {}
    except json.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def scan_inbox(inbox: Path) -> InboxScan:
    """Every collection of `inbox` with its inputs and their fingerprint."""
    scan = InboxScan()
    if not inbox.is_dir():
        return scan
    for folder in sorted(p for p in inbox.iterdir() if p.is_dir()):
        if folder.name.startswith("."):
            continue
        try:
            check_collection_name(folder.name)
            if (folder / DAILY_MARKER).exists():
                split = split_by_day(folder.name, [folder], inbox / DAYS_FOLDER / folder.name)
                named = {day_collection(folder.name, d): p for d, p in split.days.items()}
            else:
                named = {folder.name: folder}
        except ValueError as exc:
            scan.invalid[folder.name] = str(exc)
            continue
        for name, path in named.items():
            files = file_fingerprints([path])
            if files:
                scan.inputs[name] = [str(path.resolve())]
                scan.fingerprints[name] = digest(files)
    return scan
