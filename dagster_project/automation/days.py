"""Day partitions of conversation logs: one collection `<name>-YYYY-MM-DD` per day of turns.

Choice: a conversation collection is split into per-day collections, each a dynamic partition
of the same `collections` partitions definition, rather than a second (multi-)partition
dimension on every asset. Every stage keys its tables, ledgers, LanceDB tables and snapshots
by collection, so a day collection is built, snapshotted, scheduled and backfilled by the
existing assets unchanged; a MultiPartitionsDefinition would have required every stage to
filter its inputs by day. The price: each day is its own memory (facts that change across days
are not folded together); the whole log remains buildable as one collection beside them.

The split reads the collection with the loader itself (every supported conversation layout,
LoCoMo included), groups each conversation's turns by the UTC date of their timestamps, and
writes one conversation file per (conversation, day) under `<out>/<YYYY-MM-DD>/`, keeping
session ids, turn ids, speakers and timestamps. Files are rewritten only when their content
changes, so the fingerprints of untouched days stay the same and only changed days rebuild.
Plain documents (not conversation logs) are not day-partitioned and are left out.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from stores.workspace import check_collection_name
from transforms.ids import content_id
from transforms.loaders import load_inputs
from transforms.timeparse import parse_time

DAY_SUFFIX = re.compile(r"^(?P<base>.+)-(?P<day>\d{4}-\d{2}-\d{2})$")


@dataclass
class DaySplit:
    """Per-day input folders of a split collection, and what was left out."""

    days: dict[str, Path] = field(default_factory=dict)
    skipped_documents: int = 0


def day_collection(base: str, day: str) -> str:
    """The collection name of `base`'s partition for `day` (validated)."""
    return check_collection_name(f"{base}-{day}")


def parse_day_collection(name: str) -> tuple[str, date] | None:
    """(base collection, day) of a day collection's name, or None for any other name."""
    match = DAY_SUFFIX.match(name)
    if not match:
        return None
    try:
        return match["base"], date.fromisoformat(match["day"])
    except ValueError:
        return None


def select_days(names: Iterable[str], start: date, end: date, base: str | None = None) -> list[str]:
    """Day collections among `names` whose day lies in [start, end] (and whose base is
    `base`, when given), sorted by day then name."""
    chosen = []
    for name in names:
        parsed = parse_day_collection(name)
        if parsed and start <= parsed[1] <= end and (base is None or parsed[0] == base):
            chosen.append((parsed[1], name))
    return [name for _, name in sorted(chosen)]


def split_by_day(collection: str, inputs: Sequence[str | Path], out: Path) -> DaySplit:
    """Write the conversation turns of `inputs` as per-day conversation files under `out`;
    return {day: folder}. Days whose turns are gone have their folder emptied and dropped."""
    loaded = load_inputs(collection, inputs)
    files: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    split = DaySplit()
    for document in loaded.documents:
        if document["kind"] != "conversation":
            split.skipped_documents += 1
            continue
        for day, log in _logs_by_day(document).items():
            name = content_id(document["source_path"], document["record_ref"]) + ".json"
            files[day][name] = log
    for day, logs in files.items():
        folder = out / day
        folder.mkdir(parents=True, exist_ok=True)
        for name, log in logs.items():
            _write_if_changed(folder / name, json.dumps(log, indent=1, ensure_ascii=False))
        for stale in set(p.name for p in folder.glob("*.json")) - set(logs):
            (folder / stale).unlink()
        split.days[day] = folder
    for folder in out.glob("????-??-??") if out.exists() else []:
        if folder.name not in split.days:
            for stale in folder.glob("*.json"):
                stale.unlink()
            folder.rmdir()
    return split


def _logs_by_day(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The document's turns as one conversation log per UTC day, sessions in order."""
    text = document["text"]
    days: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for turn in json.loads(document["turns_json"]):
        stamp = parse_time(turn["timestamp"])
        days[stamp.date().isoformat()][turn["session_id"]].append(
            {
                "turn_id": turn["turn_id"],
                "speaker": turn["speaker"],
                "text": text[turn["char_start"] : turn["char_end"]],
                "timestamp": turn["timestamp"],
            }
        )
    conversation = document["record_ref"].removeprefix("conversation ")
    return {
        day: {
            "conversation_id": f"{conversation}@{day}",
            "title": f"{document['title']} ({day})",
            "sessions": [{"session_id": s, "turns": turns} for s, turns in sessions.items()],
        }
        for day, sessions in days.items()
    }


def _write_if_changed(path: Path, content: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != content:
        path.write_text(content, encoding="utf-8")
