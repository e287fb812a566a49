"""Links between segments and the entities they mention: the edges of the entity–segment graph.

A mention links its segment to the entity its name normalises to; a first-person subject
resolved to the turn's speaker links the speaker too. Links to names that consolidation
did not keep as entities (dates, numbers) are dropped.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from transforms.consolidation import entity_id, normalize_name


def segment_entity_ids(
    collection: str,
    surfaces: Iterable[Mapping[str, str]],
    known_entities: set[str],
) -> dict[str, list[str]]:
    """Entity ids per segment id from rows with `segment_id` and `surface`."""
    links: dict[str, set[str]] = defaultdict(set)
    for row in surfaces:
        key = normalize_name(row["surface"])
        ident = entity_id(collection, key) if key else None
        if ident in known_entities:
            links[row["segment_id"]].add(ident)
    return {segment: sorted(ids) for segment, ids in links.items()}


def entity_description(name: str, entity_type: str, aliases: Iterable[str]) -> str:
    """Text embedded for an entity: its name, type and other surface forms."""
    others = sorted({a for a in aliases if a != name})
    suffix = f" (also: {', '.join(others)})" if others else ""
    return f"{name}, {entity_type}{suffix}"
