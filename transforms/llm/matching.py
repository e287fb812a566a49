"""Matching the entity names an LLM wrote back to the NER mentions of the segment.

An LLM answer names entities as free strings; the graph needs them anchored to what NER
found in the same segment (and, in conversations, to the speakers, who are named before
the text rather than in it). The cascade, first hit wins:

1. a first-person pronoun ("I", "me", "my") is the current speaker;
2. exact: equal `normalize_name` keys ("the Acme Corp." = "ACME"); a mention wins over a
   speaker of the same name because it has a span;
3. containment: one key is a whole-word run inside the other ("Priya" in "Priya
   Natarajan", "Harborview office" in "the new Harborview office"), only when exactly one
   entity qualifies: a name spanning two mentions ("the Harborview Office in Rotterdam")
   or one contained in two different mentions is ambiguous and stays unmatched (a wrong
   anchor would put a wrong edge in the graph; an unmatched one is quarantined for
   review); keys under 3 characters never contain-match;
4. fuzzy: `difflib` similarity of the keys at least `fuzzy_threshold` (default 0.85, the
   string-similarity bar KGERMAR uses for consolidation), best ratio wins.

Every mention type counts, values included: a REAL fact may end in a date or an amount.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from typing import Any

from transforms.consolidation import normalize_name

DEFAULT_FUZZY_THRESHOLD = 0.85
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself"})
SPEAKER_TYPE = "Person"
_MIN_CONTAINED_CHARS = 3


@dataclass(frozen=True)
class EntityMatch:
    """An entity end resolved in the segment: the mention (or speaker) and how it matched."""

    text: str
    entity_type: str
    char_start: int | None
    char_end: int | None
    match: str

    def as_struct(self) -> dict[str, Any]:
        """The `ENTITY_REF` struct of `schemas.llm_outputs`."""
        return {
            "text": self.text,
            "entity_type": self.entity_type,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "match_kind": self.match,
        }


def _contains(longer: str, shorter: str) -> bool:
    return len(shorter) >= _MIN_CONTAINED_CHARS and f" {shorter} " in f" {longer} "


class MentionMatcher:
    """Resolves names against a segment's `mentions` (MENTION dicts) and `speakers`."""

    def __init__(
        self,
        mentions: Iterable[Mapping[str, Any]],
        speakers: Sequence[str],
        fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD,
    ) -> None:
        self._candidates: list[tuple[str, EntityMatch]] = []
        for m in mentions:
            found = EntityMatch(m["text"], m["entity_type"], m["char_start"], m["char_end"], "")
            self._candidates.append((normalize_name(m["text"]), found))
        for speaker in dict.fromkeys(s for s in speakers if s):
            found = EntityMatch(speaker, SPEAKER_TYPE, None, None, "speaker")
            self._candidates.append((normalize_name(speaker), found))
        self._candidates = [(key, c) for key, c in self._candidates if key]
        self._fuzzy_threshold = fuzzy_threshold

    def match(self, name: str, speaker: str | None = None) -> EntityMatch | None:
        """The mention or speaker `name` refers to; `speaker` is who "I" is (None: nobody)."""
        if name.strip().casefold() in FIRST_PERSON:
            return EntityMatch(speaker, SPEAKER_TYPE, None, None, "speaker") if speaker else None
        key = normalize_name(name)
        if not key:
            return None
        for candidate_key, candidate in self._candidates:
            if candidate_key == key:
                return _as(candidate, "exact")
        # One entry per entity key; iterating in reverse lets its earliest mention win.
        contained = {
            ck: c
            for ck, c in reversed(self._candidates)
            if _contains(ck, key) or _contains(key, ck)
        }
        if len(contained) == 1:
            return _as(next(iter(contained.values())), "containment")
        if contained:
            return None
        ratios = [
            (SequenceMatcher(None, key, ck).ratio(), -i, c)
            for i, (ck, c) in enumerate(self._candidates)
        ]
        best = max(ratios, key=lambda t: (t[0], t[1]), default=None)
        if best is not None and best[0] >= self._fuzzy_threshold:
            return _as(best[2], "fuzzy")
        return None


def _as(candidate: EntityMatch, how: str) -> EntityMatch:
    """`candidate` with its match kind; speakers keep "speaker" whichever way they matched."""
    if candidate.match == "speaker":
        return candidate
    return replace(candidate, match=how)
