"""Entity resolution: a blocking cascade with reversible, explained merges.

KGERMAR merges two entities when their string similarity exceeds θ_str (0.85,
Levenshtein) or their embedding cosine exceeds θ_ctx (0.90). Comparing all pairs does not
scale, so the cascade compares only candidates that a cheap key puts together:

1. `exact`: identical surface forms (one mention group per surface);
2. `normalized`: the same normalised key ("Acme Corp", "ACME", "Acme Corporation");
3. `levenshtein`: keys sharing a blocking token (a word of 4+ characters, or a 4-character
   prefix) with normalised Levenshtein similarity > θ_str; tokens shared by more than
   `max_block` keys are too common to block on and are skipped;
4. `person_surname`: a one-word Person key equal to the last word of exactly one
   multi-word Person key ("Natarajan" -> "Priya Natarajan"); ambiguous surnames stay apart;
5. `acronym`: a key written in capitals whose letters are the initials of exactly one
   multi-word key of its type ("U.S." -> "United States", "AACSB" -> "Association to
   Advance Collegiate Schools of Business");
6. `embedding`: keys whose name embeddings fall in the same bucket of random-hyperplane
   LSH in at least one band (sub-quadratic), with cosine > θ_ctx.

Guards, applied to the similarity steps (3 and 6): only entities of the same type merge
("German" the nationality is not "Germany"); names that differ in a number or a
distinguishing word never merge ("2006 Winter Olympics" / "2010 Winter Olympics", "Second
Division" / "Third Division", "Jr" / "Sr"); and a short key (at most `short_key`
characters) never merges by string or embedding similarity ("IBM" is not "IBX"), only by
its normalised form or as an acronym. User constraints win over
everything: a `cannot_link` pair (a split of a wrong merge) is never united, a
`must_link` pair always is.

Merges are unions of mention keys in a union-find; nothing is destroyed. The output is a
`same_as` row per key (key -> entity, method, score): undoing a merge is one cannot-link
row, honoured by the next build. The entity id hashes the group's anchor key (its most
specific key: most words, then most mentions, then alphabetical: "priya natarajan" over
"natarajan"), so ids are stable while the group's dominant name is; the entity's name is
the anchor's most frequent surface form.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from rapidfuzz.distance import Levenshtein

from transforms.consolidation import entity_id, normalize_name
from transforms.entity_types import is_graph_entity

DISTINGUISHERS = frozenset(
    [
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "i",
        "ii",
        "iii",
        "iv",
        "v",
        "vi",
        "vii",
        "viii",
        "ix",
        "x",
        "jr",
        "sr",
        "junior",
        "senior",
        "elder",
        "younger",
        "north",
        "south",
        "east",
        "west",
        "upper",
        "lower",
        "new",
        "old",
    ]
)
"""Words that tell apart names otherwise alike ("Second Division" / "Third Division",
"Paul Desmarais Jr" / "Sr", "North Korea" / "South Korea")."""
ACRONYM_STOPWORDS = frozenset(
    [
        "of",
        "the",
        "and",
        "for",
        "to",
        "in",
        "on",
        "at",
        "de",
        "la",
        "del",
        "des",
        "du",
        "von",
        "van",
    ]
)


@dataclass(frozen=True)
class ResolutionConfig:
    """Thresholds and limits of the cascade (KGERMAR's θ_str = 0.85, θ_ctx = 0.90)."""

    theta_str: float = 0.85
    theta_ctx: float = 0.90
    short_key: int = 4
    max_block: int = 50
    lsh_bits: int = 12
    lsh_bands: int = 8
    seed: int = 13
    use_embeddings: bool = True


@dataclass
class KeyStats:
    """What is known of one normalised key: its surfaces, types and mention count."""

    key: str
    surfaces: Counter[str] = field(default_factory=Counter)
    types: Counter[str] = field(default_factory=Counter)

    @property
    def count(self) -> int:
        return sum(self.surfaces.values())

    @property
    def entity_type(self) -> str:
        return max(self.types, key=lambda t: (self.types[t], t))


@dataclass(frozen=True)
class SameAs:
    """Link from a mention key to its entity, with the step and score that put it there."""

    key: str
    entity_id: str
    method: str
    score: float


@dataclass
class Resolution:
    """Entities, aliases and same_as links of a collection."""

    entities: list[dict[str, object]]
    aliases: list[dict[str, object]]
    same_as: list[SameAs]

    def entity_of(self) -> dict[str, str]:
        """Normalised key -> entity id."""
        return {link.key: link.entity_id for link in self.same_as}


class _UnionFind:
    def __init__(self, keys: Iterable[str], cannot_link: set[frozenset[str]]) -> None:
        self.parent = {k: k for k in keys}
        self.members: dict[str, set[str]] = {k: {k} for k in self.parent}
        self.cannot = cannot_link
        self.how: dict[str, tuple[str, float]] = {}

    def find(self, key: str) -> str:
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, a: str, b: str, method: str, score: float, forced: bool = False) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        if not forced and any(
            frozenset((x, y)) in self.cannot for x in self.members[ra] for y in self.members[rb]
        ):
            return False
        small, large = sorted((ra, rb), key=lambda r: (len(self.members[r]), r))
        self.parent[small] = large
        self.members[large] |= self.members.pop(small)
        self.how.setdefault(a, (method, score))
        self.how.setdefault(b, (method, score))
        return True


def collect_keys(surfaces: Iterable[tuple[str, str]]) -> dict[str, KeyStats]:
    """Group (surface, type) observations of graph-entity types by normalised key."""
    keys: dict[str, KeyStats] = {}
    for surface, type_name in surfaces:
        key = normalize_name(surface)
        if not key or not is_graph_entity(type_name):
            continue
        stats = keys.setdefault(key, KeyStats(key))
        stats.surfaces[
            " ".join(w for i, w in enumerate(surface.split()) if i or w.casefold() != "the")
        ] += 1
        stats.types[type_name] += 1
    return keys


def compatible(a: KeyStats, b: KeyStats) -> bool:
    """Type guard of the similarity steps: only entities of the same type merge ("German",
    a Concept, is not "Germany", a Location)."""
    return a.entity_type == b.entity_type


def _distinguishers(key: str) -> frozenset[str]:
    return frozenset(w for w in key.split() if w.isdigit() or w in DISTINGUISHERS)


def _fuzzy_allowed(a: KeyStats, b: KeyStats, cfg: ResolutionConfig) -> bool:
    return (
        compatible(a, b)
        and min(len(a.key), len(b.key)) > cfg.short_key
        and _distinguishers(a.key) == _distinguishers(b.key)
    )


def _initials(key: str) -> str:
    return "".join(w[0] for w in key.split() if w not in ACRONYM_STOPWORDS)


def _acronyms(stats: dict[str, KeyStats], uf: _UnionFind) -> None:
    """An acronym key ("us", written "U.S." or "US") joins the one multi-word key of its type
    whose initials it spells ("united states"); ambiguous acronyms stay apart."""
    expansions: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key, s in stats.items():
        if len(key.split()) > 1 and any(len(w) > 1 for w in key.split()):
            expansions[(_initials(key), s.entity_type)].append(key)
    for key, s in stats.items():
        written_as_acronym = any(f.replace(".", "").isupper() for f in s.surfaces)
        owners = expansions.get((key.replace(" ", ""), s.entity_type), [])
        if written_as_acronym and len(key.replace(" ", "")) > 1 and len(owners) == 1:
            uf.union(key, owners[0], "acronym", 1.0)


def _blocks(keys: Sequence[str], max_block: int) -> Iterable[list[str]]:
    index: dict[str, list[str]] = defaultdict(list)
    for key in keys:
        tokens = {w for w in key.split() if len(w) >= 4} | {key[:4]}
        for token in tokens:
            index[token].append(key)
    for members in index.values():
        if 1 < len(members) <= max_block:
            yield members


def _lsh_pairs(vectors: np.ndarray, cfg: ResolutionConfig) -> set[tuple[int, int]]:
    rng = np.random.default_rng(cfg.seed)
    pairs: set[tuple[int, int]] = set()
    for _ in range(cfg.lsh_bands):
        planes = rng.standard_normal((vectors.shape[1], cfg.lsh_bits))
        bits = (vectors @ planes) > 0
        codes = bits @ (1 << np.arange(cfg.lsh_bits))
        buckets: dict[int, list[int]] = defaultdict(list)
        for index, code in enumerate(codes.tolist()):
            buckets[code].append(index)
        for members in buckets.values():
            if 1 < len(members) <= cfg.max_block:
                pairs.update((a, b) for i, a in enumerate(members) for b in members[i + 1 :])
    return pairs


def resolve(
    collection: str,
    surfaces: Iterable[tuple[str, str]],
    embed: Callable[[Sequence[str]], np.ndarray] | None = None,
    cfg: ResolutionConfig = ResolutionConfig(),
    cannot_link: Iterable[tuple[str, str]] = (),
    must_link: Iterable[tuple[str, str]] = (),
) -> Resolution:
    """Run the cascade over (surface, type) observations; constraints name keys or surfaces."""
    stats = collect_keys(surfaces)
    keys = sorted(stats)
    cannot = {frozenset((normalize_name(a), normalize_name(b))) for a, b in cannot_link}
    uf = _UnionFind(keys, cannot)
    for a, b in must_link:
        ka, kb = normalize_name(a), normalize_name(b)
        if ka in stats and kb in stats:
            uf.union(ka, kb, "must_link", 1.0, forced=True)
    for block in _blocks(keys, cfg.max_block):
        for i, a in enumerate(block):
            for b in block[i + 1 :]:
                if _fuzzy_allowed(stats[a], stats[b], cfg):
                    score = Levenshtein.normalized_similarity(a, b)
                    if score > cfg.theta_str:
                        uf.union(a, b, "levenshtein", round(score, 4))
    _surnames(stats, uf)
    _acronyms(stats, uf)
    if cfg.use_embeddings and embed is not None and len(keys) > 1:
        vectors = embed(keys)
        for i, j in sorted(_lsh_pairs(vectors, cfg)):
            a, b = keys[i], keys[j]
            if _fuzzy_allowed(stats[a], stats[b], cfg):
                score = float(vectors[i] @ vectors[j])
                if score > cfg.theta_ctx:
                    uf.union(a, b, "embedding", round(score, 4))
    return _resolution(collection, stats, uf)


def _surnames(stats: dict[str, KeyStats], uf: _UnionFind) -> None:
    full_names: dict[str, list[str]] = defaultdict(list)
    for key, s in stats.items():
        words = key.split()
        if len(words) > 1 and s.entity_type == "Person":
            full_names[words[-1]].append(key)
    for key, s in stats.items():
        owners = full_names.get(key, [])
        if " " not in key and s.entity_type == "Person" and len(owners) == 1:
            uf.union(key, owners[0], "person_surname", 1.0)


def _resolution(collection: str, stats: dict[str, KeyStats], uf: _UnionFind) -> Resolution:
    groups: dict[str, list[str]] = defaultdict(list)
    for key in stats:
        groups[uf.find(key)].append(key)
    entities, aliases, same_as = [], [], []
    for members in sorted(groups.values()):
        anchor = min(members, key=lambda k: (-len(k.split()), -stats[k].count, k))
        ident = entity_id(collection, anchor)
        surfaces: Counter[str] = Counter()
        types: Counter[str] = Counter()
        for key in members:
            surfaces.update(stats[key].surfaces)
            types.update(stats[key].types)
            method, score = (
                ("normalized", 1.0) if key == anchor else uf.how.get(key, ("normalized", 1.0))
            )
            same_as.append(SameAs(key, ident, method, score))
        entities.append(
            {
                "entity_id": ident,
                "collection": collection,
                "name": max(
                    stats[anchor].surfaces, key=lambda s: (stats[anchor].surfaces[s], len(s), s)
                ),
                "entity_type": max(types, key=lambda t: (types[t], t)),
                "norm_key": anchor,
                "mention_count": sum(surfaces.values()),
            }
        )
        aliases.extend(
            {"collection": collection, "entity_id": ident, "alias": alias, "mention_count": n}
            for alias, n in sorted(surfaces.items())
        )
    return Resolution(entities, aliases, same_as)
