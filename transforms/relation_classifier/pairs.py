"""The entity pairs of a segment that a relation classifier is asked about.

A segment row (`SEGMENT_WITH_MENTIONS`) carries NER mentions with char spans. Mentions of
graph entity types (not dates or numbers) are placed on the segment's own word tokens, and
every ordered pair within the window (`transforms.pair_window`) becomes a `PairQuery`,
except pairs of two mentions of the same entity (same consolidation key): those would be
self-relations.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from transforms.consolidation import normalize_name
from transforms.entity_types import is_graph_entity
from transforms.pair_window import DEFAULT_WINDOW, mention_token_spans, window_pairs

MentionKey = Callable[[Mapping[str, Any]], Hashable]


@dataclass(frozen=True)
class PairQuery:
    """One ordered mention pair: char spans into the segment text, KGERMAR types, distance."""

    head: tuple[int, int]
    tail: tuple[int, int]
    head_type: str
    tail_type: str
    distance: int


@dataclass(frozen=True)
class SegmentPairs:
    """A segment's text and the pairs to classify in it; `mentions[i]` are the source
    mentions of `pairs[i]` (head, tail)."""

    text: str
    pairs: tuple[PairQuery, ...]
    mentions: tuple[tuple[Mapping[str, Any], Mapping[str, Any]], ...]


def consolidation_key(mention: Mapping[str, Any]) -> Hashable:
    """The key entity consolidation merges mentions by (their normalised name)."""
    return normalize_name(mention["text"])


def segment_pairs(
    text: str,
    mentions: Sequence[Mapping[str, Any]],
    window: int = DEFAULT_WINDOW,
    key: MentionKey = consolidation_key,
) -> SegmentPairs:
    """Ordered pairs of graph-entity `mentions` of `text` within `window` tokens whose
    `key`s differ."""
    graph = [m for m in mentions if is_graph_entity(m["entity_type"])]
    spans = mention_token_spans(text, [(m["char_start"], m["char_end"]) for m in graph])
    pairs: list[PairQuery] = []
    sources: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
    for i, j, distance in window_pairs(spans, window):
        head, tail = graph[i], graph[j]
        if key(head) == key(tail):
            continue
        pairs.append(
            PairQuery(
                head=(head["char_start"], head["char_end"]),
                tail=(tail["char_start"], tail["char_end"]),
                head_type=head["entity_type"],
                tail_type=tail["entity_type"],
                distance=distance,
            )
        )
        sources.append((head, tail))
    return SegmentPairs(text, tuple(pairs), tuple(sources))
