"""How the pair window W trades recall of gold entity pairs against candidate pairs.

For every document, the related ordered pairs (h, t) between graph entities (clusters
whose type maps to a KGERMAR entity type, so not TIME / NUM values) count as recalled at W
when some mention of h and some mention of t lie within W tokens (`transforms.pair_window`
distance over the rebuilt text's own tokens). The in-chunk variant also requires the two
mentions to share a chunk of the segmenter (the unit the pipeline classifies). The cost
side is the number of ordered mention pairs between different graph entities that W
admits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from transforms.entity_types import entity_type, is_graph_entity
from transforms.pair_window import mention_token_spans, token_distance
from transforms.redocred import Document
from transforms.segmenting import DEFAULT_CHUNK_TOKENS, chunk_spans

DEFAULT_WINDOWS = (5, 10, 20, 30, 50, 75, 100, 150)


@dataclass(frozen=True)
class WindowRecall:
    """Recall of gold pairs and candidate-pair count at one window size."""

    window: int | None  # None: no window
    gold_pairs: int
    recall: float
    recall_in_chunk: float
    mention_pairs: int

    def to_dict(self) -> dict[str, float | int | None]:
        return asdict(self)


def _closest(document: Document, chunk_tokens: int) -> tuple[list[tuple[int, int]], list[int]]:
    """Per related graph pair: (closest distance, closest in-chunk distance); and the
    distances of every ordered mention pair between different graph entities."""
    graph = {e.index for e in document.entities if is_graph_entity(entity_type(e.label))}
    mentions = [m for m in document.mentions if m.entity in graph]
    spans = mention_token_spans(document.text, [(m.char_start, m.char_end) for m in mentions])
    chunks = chunk_spans(document.text, chunk_tokens)
    chunk_of = [
        next((i for i, (s, e) in enumerate(chunks) if s <= m.char_start < e), -1) for m in mentions
    ]
    far = 1 << 30
    best: dict[tuple[int, int], list[int]] = {}
    pair_distances: list[int] = []
    for i, (head, head_span) in enumerate(zip(mentions, spans, strict=True)):
        for j, (tail, tail_span) in enumerate(zip(mentions, spans, strict=True)):
            if head.entity == tail.entity or head_span is None or tail_span is None:
                continue
            distance = token_distance(head_span, tail_span)
            pair_distances.append(distance)
            current = best.setdefault((head.entity, tail.entity), [far, far])
            current[0] = min(current[0], distance)
            if chunk_of[i] == chunk_of[j]:
                current[1] = min(current[1], distance)
    gold = {(r.head, r.tail) for r in document.relations if {r.head, r.tail} <= graph}
    closest = [(best[p][0], best[p][1]) if p in best else (far, far) for p in sorted(gold)]
    return closest, pair_distances


def window_recall(
    documents: Sequence[Document],
    windows: Sequence[int] = DEFAULT_WINDOWS,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
) -> list[WindowRecall]:
    """Recall and candidate-pair count for each window size, then with no window."""
    closest: list[tuple[int, int]] = []
    distances: list[int] = []
    for document in documents:
        doc_closest, doc_distances = _closest(document, chunk_tokens)
        closest.extend(doc_closest)
        distances.extend(doc_distances)
    total = max(len(closest), 1)
    rows = []
    for window in [*windows, None]:
        limit = (1 << 30) - 1 if window is None else window
        rows.append(
            WindowRecall(
                window=window,
                gold_pairs=len(closest),
                recall=round(sum(d <= limit for d, _ in closest) / total, 4),
                recall_in_chunk=round(sum(c <= limit for _, c in closest) / total, 4),
                mention_pairs=sum(d <= limit for d in distances),
            )
        )
    return rows
