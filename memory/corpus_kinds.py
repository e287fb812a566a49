"""Per-segment weights chosen by corpus kind (documents, conversations), for the fusions
that weigh their signals per kind (`hybrid`, `hipporag_ppr`, every traversal's blend).

A view whose segments are all of one kind (found once per view) gives every segment that
kind's weights without a look-up of the segment's kind: a blend asks for a few hundred
items a query (~0.5 ms a MemORAI query at 100k facts).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from memory.snapshot_view import SnapshotView
from transforms.hybrid_weights import CORPUS_KINDS

W = TypeVar("W")
DEFAULT_KIND = "documents"
"""The corpus kind of a segment whose kind names none (`CORPUS_KINDS`)."""


def corpus_kind(view: SnapshotView, segment: str) -> str:
    """The corpus kind of `segment`."""
    return CORPUS_KINDS.get(view.segment_kind(segment), DEFAULT_KIND)


def corpus_kinds(view: SnapshotView) -> frozenset[str]:
    """The corpus kinds of the view's segments (kept per view)."""
    if "corpus_kinds" not in view.cache:
        view.cache["corpus_kinds"] = frozenset(
            CORPUS_KINDS.get(kind, DEFAULT_KIND) for kind in set(view.segment_kinds)
        )
    return view.cache["corpus_kinds"]


def weights_by_kind(view: SnapshotView, by_kind: Mapping[str, W]) -> Callable[[str], W]:
    """segment id -> `by_kind`'s entry for the segment's corpus kind."""
    kinds = corpus_kinds(view)
    if len(kinds) == 1:
        only = by_kind[next(iter(kinds))]
        return lambda segment: only
    return lambda segment: by_kind[corpus_kind(view, segment)]
