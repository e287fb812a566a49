"""Untyped entity – entity links of the passage graph, beside the typed facts: entities
that co-occur in a segment, and entities whose names are synonyms.

**Co-occurrence** (KGERMAR's window, without its classifier): two entities whose mentions
lie within W tokens in one segment (`transforms.pair_window`, W = `DEFAULT_WINDOW`, the
window relation extraction classifies) are linked when no typed fact joins them, in
either direction. The paper only classifies such pairs; a pair the classifier rejected
still says the two are talked about together, so it is kept, as `co_occurs` with the low
weight `COOCCURRENCE_WEIGHT` (a typed fact's weight is its confidence, about 0.5-1), so
that typed facts still win where both exist. One link per pair however often it recurs.

**Synonymy** (HippoRAG 2's synonym edges): each entity's name vector is matched to its
`SYNONYM_NEIGHBOURS` nearest names through the LanceDB index, and a pair at cosine
>= `SYNONYM_THRESHOLD` (HippoRAG 2's 0.8) is linked as `synonym`, weighted by the cosine.
Names are embedded alone: a description ("Caroline, Person (also: Caro)...") shares its
type and template with every other person's, which makes unrelated names look close.
Entity resolution has already merged names that normalise alike, so what remains are
variants it cannot see ("NYC", "New York City"). Phrase nodes carry no vectors: their
lemmatised key already merges their surface variants.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from transforms.consolidation import normalize_name
from transforms.ids import content_id
from transforms.pair_window import DEFAULT_WINDOW, mention_token_spans, window_pairs

CO_OCCURS = "co_occurs"
SYNONYM = "synonym"
COOCCURRENCE_WEIGHT = 0.1
SYNONYM_THRESHOLD = 0.8
SYNONYM_NEIGHBOURS = 8

Pair = tuple[str, str]


def link_row(head: str, tail: str, kind: str, weight: float) -> dict[str, Any]:
    """A LANCE_ENTITY_LINKS row for an unordered pair (its ends sorted)."""
    a, b = sorted((head, tail))
    return {
        "link_id": content_id(a, b, kind),
        "head_id": a,
        "tail_id": b,
        "kind": kind,
        "weight": float(weight),
    }


def cooccurrence_links(
    mentions: Iterable[Mapping[str, Any]],
    entity_of: Mapping[str, str],
    typed: Iterable[Pair],
    window: int = DEFAULT_WINDOW,
) -> list[dict[str, Any]]:
    """Co-occurrence links from mention rows (segment_id, surface, char_start, char_end,
    segment_text): pairs of resolved entities within `window` tokens in one segment that
    no pair in `typed` (head id, tail id; either direction) joins. Sorted by link id."""
    joined = {frozenset(pair) for pair in typed}
    by_segment: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in mentions:
        by_segment[row["segment_id"]].append(row)
    pairs: set[Pair] = set()
    for rows in by_segment.values():
        ids = [entity_of.get(normalize_name(str(r["surface"]))) for r in rows]
        spans = mention_token_spans(
            str(rows[0]["segment_text"]), [(r["char_start"], r["char_end"]) for r in rows]
        )
        for i, j, _ in window_pairs(spans, window):
            a, b = ids[i], ids[j]
            if a and b and a != b and frozenset((a, b)) not in joined:
                pairs.add((min(a, b), max(a, b)))
    links = [link_row(a, b, CO_OCCURS, COOCCURRENCE_WEIGHT) for a, b in pairs]
    return sorted(links, key=lambda row: row["link_id"])


def synonym_links(
    neighbours: Iterable[tuple[str, str, float]], threshold: float = SYNONYM_THRESHOLD
) -> list[dict[str, Any]]:
    """Synonym links from (entity id, neighbour id, cosine) rows: distinct pairs at
    `threshold` or above, each weighted by its highest cosine. Sorted by link id."""
    best: dict[Pair, float] = {}
    for a, b, cosine in neighbours:
        if a == b or cosine < threshold:
            continue
        pair = (min(a, b), max(a, b))
        best[pair] = max(best.get(pair, 0.0), cosine)
    links = [link_row(a, b, SYNONYM, cosine) for (a, b), cosine in best.items()]
    return sorted(links, key=lambda row: row["link_id"])


def link_counts(links: Iterable[Mapping[str, Any]]) -> Iterator[tuple[str, int]]:
    """(kind, number of links) in kind order."""
    counts: dict[str, int] = defaultdict(int)
    for link in links:
        counts[link["kind"]] += 1
    yield from sorted(counts.items())


def inputs_digest(
    mentions: Iterable[Mapping[str, Any]],
    typed: Iterable[Pair],
    entity_of: Mapping[str, str],
    ids: Sequence[str],
    vectors: np.ndarray,
) -> str:
    """A digest of everything the links are computed from: the mentions (surface, segment,
    offsets, the segment's text), the typed pairs, the name-to-entity map, the entity
    name vectors (rows in `ids` order) and this module's rules. Order-insensitive where
    the inputs are sets (the warehouse returns mentions and pairs in no fixed order), so
    an unchanged collection gets the same digest, and the stage can keep its links
    instead of searching the names again (an approximate search may find another pair)."""
    digest = hashlib.sha256()
    rules = [DEFAULT_WINDOW, COOCCURRENCE_WEIGHT, SYNONYM_THRESHOLD, SYNONYM_NEIGHBOURS]
    texts: dict[str, str] = {}
    spans = []
    for mention in mentions:
        texts[mention["segment_id"]] = mention["segment_text"]
        spans.append(
            [mention["segment_id"], mention["char_start"], mention["char_end"], mention["surface"]]
        )
    for part in (
        rules,
        sorted(spans),
        sorted(texts.items()),
        sorted(map(list, typed)),
        sorted(entity_of.items()),
        list(ids),
    ):
        digest.update(json.dumps(part, ensure_ascii=False).encode("utf-8"))
    digest.update(np.ascontiguousarray(vectors, np.float32).tobytes())
    return digest.hexdigest()
