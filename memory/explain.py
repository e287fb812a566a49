"""`kgmem query --explain` for a reader: the segment ids in a strategy's explanation (its
seed segments, the flat ranking's head, the walk's top) shown with the head of their
text, so a seed says what it is instead of being a bare id (issue 37, 3.14)."""

from __future__ import annotations

from typing import Any

from memory.snapshot_view import SnapshotView

HEAD_CHARS = 60
"""Characters of a segment's text shown beside its id."""


def segment_head(view: SnapshotView, segment_id: str) -> str:
    """`id «first HEAD_CHARS characters of its text…»`."""
    text = " ".join(str(view.segment(segment_id, ("text",))["text"] or "").split())
    cut = text[:HEAD_CHARS] + ("…" if len(text) > HEAD_CHARS else "")
    return f"{segment_id} «{cut}»"


def with_segment_heads(value: Any, view: SnapshotView) -> Any:
    """`value` (an explanation: dicts, lists, strings, numbers) with every string that is
    a segment id of the snapshot, as a key or a value, replaced by `segment_head`."""
    if isinstance(value, dict):
        return {_named(key, view): with_segment_heads(v, view) for key, v in value.items()}
    if isinstance(value, list | tuple):
        return [with_segment_heads(v, view) for v in value]
    return _named(value, view)


def _named(value: Any, view: SnapshotView) -> Any:
    if isinstance(value, str) and value in view.segment_index:
        return segment_head(view, value)
    return value
