"""Entity consolidation by normalised name, with an alias table.

Mentions whose names normalise to the same key ("Acme Corp", "ACME", "Acme Corporation"
-> "acme") become one entity. Normalisation: Unicode NFKC, case-folding, a trailing
possessive and punctuation removed, a leading "the" and trailing company suffixes
dropped. The entity's name is its most frequent surface form (ties: the longest), its
type the most frequent type. Entity ids hash (collection, key), so they are stable across
builds. The Levenshtein / embedding cascade and reversible `same_as` links are the
consolidation issue's work; this stage is deterministic and order-independent.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from typing import Any

from transforms.entity_types import is_graph_entity
from transforms.ids import content_id

_COMPANY_SUFFIXES = {
    "corp", "corporation", "inc", "incorporated", "ltd", "limited", "llc", "co", "company",
    "plc", "gmbh", "group",
}  # fmt: skip
_NON_WORD = re.compile(r"[^\w\s]")


def normalize_name(name: str) -> str:
    """Consolidation key of an entity name ('' if nothing is left)."""
    text = unicodedata.normalize("NFKC", name).casefold().strip()
    text = re.sub(r"['’]s$", "", text)
    words = _NON_WORD.sub(" ", text).split()
    if words and words[0] == "the":
        words = words[1:]
    while len(words) > 1 and words[-1] in _COMPANY_SUFFIXES:
        words = words[:-1]
    return " ".join(words)


def entity_id(collection: str, key: str) -> str:
    """Stable id of the entity whose normalised key is `key`."""
    return content_id("entity", collection, key)


def consolidate(
    collection: str, surfaces: Iterable[tuple[str, str]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Group (surface name, entity type) observations into entities and aliases.

    Returns (entities, aliases): entities with id, name, type, key and mention count;
    aliases with every distinct surface form of each entity and its count.
    """
    surface_counts: dict[str, Counter[str]] = defaultdict(Counter)
    type_counts: dict[str, Counter[str]] = defaultdict(Counter)
    for surface, type_name in surfaces:
        key = normalize_name(surface)
        if not key or not is_graph_entity(type_name):
            continue
        surface_counts[key][_clean_surface(surface)] += 1
        type_counts[key][type_name] += 1
    entities, aliases = [], []
    for key in sorted(surface_counts):
        counts = surface_counts[key]
        ident = entity_id(collection, key)
        name = max(counts, key=lambda s: (counts[s], len(s), s))
        entities.append(
            {
                "entity_id": ident,
                "collection": collection,
                "name": name,
                "entity_type": max(type_counts[key], key=lambda t: (type_counts[key][t], t)),
                "norm_key": key,
                "mention_count": sum(counts.values()),
            }
        )
        aliases.extend(
            {"collection": collection, "entity_id": ident, "alias": alias, "mention_count": n}
            for alias, n in sorted(counts.items())
        )
    return entities, aliases


def _clean_surface(surface: str) -> str:
    words = surface.strip().split()
    if words and words[0].casefold() == "the":
        words = words[1:]
    return " ".join(words)
