"""Name normalisation and entity ids: the first two steps of entity resolution.

Mentions whose names normalise to the same key ("Acme Corp", "ACME", "Acme Corporation"
-> "acme") are one mention key. Normalisation: Unicode NFKC, case-folding, a trailing
possessive and punctuation removed, a leading "the" and trailing company suffixes
dropped. Entity ids hash (collection, anchor key), so they are stable across builds. The
rest of the cascade is in `transforms.entity_resolution`.
"""

from __future__ import annotations

import re
import unicodedata

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
