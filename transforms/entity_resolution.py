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

Incremental runs. The similarity steps (3 and 6) keep a `BlockingIndex` between runs: each
key with its stats, its tokens and its LSH band codes, and every candidate edge (a pair
that passed the guards and the threshold in a block within `max_block`) with its score.
A re-run re-blocks only the keys that are new or whose type changed, compares them within
the blocks they are in, compares every pair of a block that removals brought back under
`max_block`, and drops the edges of removed keys and of blocks grown over it
(`update_index`). The surname and acronym steps are linear passes and are recomputed
whole. Then every edge is replayed into a fresh union-find in one defined order
(`_replay`), so a re-run gives exactly what a full run of the same inputs gives.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
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
        if (
            not forced
            and self.cannot
            and any(
                frozenset((x, y)) in self.cannot for x in self.members[ra] for y in self.members[rb]
            )
        ):
            return False
        small, large = sorted((ra, rb), key=lambda r: (len(self.members[r]), r))
        self.parent[small] = large
        self.members[large] |= self.members.pop(small)
        self.how.setdefault(a, (method, score))
        self.how.setdefault(b, (method, score))
        return True


def collect_keys(surfaces: Iterable[tuple[str, str]]) -> dict[str, KeyStats]:
    """Group (surface, type) observations of graph-entity types by normalised key (each
    distinct observation normalised once)."""
    keys: dict[str, KeyStats] = {}
    for (surface, type_name), count in Counter(surfaces).items():
        key = normalize_name(surface)
        if not key or not is_graph_entity(type_name):
            continue
        stats = keys.setdefault(key, KeyStats(key))
        stats.surfaces[
            " ".join(w for i, w in enumerate(surface.split()) if i or w.casefold() != "the")
        ] += count
        stats.types[type_name] += count
    return keys


def _distinguishers(key: str) -> frozenset[str]:
    return frozenset(w for w in key.split() if w.isdigit() or w in DISTINGUISHERS)


Guard = tuple[str, frozenset[str]]


def _guard(stats: KeyStats, cfg: ResolutionConfig) -> Guard | None:
    """What the guards of the similarity steps compare of a key: its type (only entities
    of the same type merge: "German", a Concept, is not "Germany", a Location) and its
    distinguishing words; None for a short key, which never merges by similarity. Two keys
    may merge by similarity only when their guards are equal and not None."""
    if len(stats.key) <= cfg.short_key:
        return None
    return stats.entity_type, _distinguishers(stats.key)


def _initials(key: str) -> str:
    return "".join(w[0] for w in key.split() if w not in ACRONYM_STOPWORDS)


def _acronyms(stats: dict[str, KeyStats], uf: _UnionFind) -> None:
    """An acronym key ("us", written "U.S." or "US") joins the one multi-word key of its type
    whose initials it spells ("united states"); ambiguous acronyms stay apart."""
    expansions: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key, s in sorted(stats.items()):
        if len(key.split()) > 1 and any(len(w) > 1 for w in key.split()):
            expansions[(_initials(key), s.entity_type)].append(key)
    for key, s in sorted(stats.items()):
        written_as_acronym = any(f.replace(".", "").isupper() for f in s.surfaces)
        owners = expansions.get((key.replace(" ", ""), s.entity_type), [])
        if written_as_acronym and len(key.replace(" ", "")) > 1 and len(owners) == 1:
            uf.union(key, owners[0], "acronym", 1.0)


LEVENSHTEIN = "levenshtein"
EMBEDDING = "embedding"
SIMILARITY_STEPS = (LEVENSHTEIN, EMBEDDING)
"""The steps whose candidates come from blocks, in the order their edges are replayed
(the rule steps, surname and acronym, replay between them)."""
COSINE_CHUNK = 4096
"""Pairs whose cosines are computed in one array operation."""

Pair = tuple[str, str]
EdgeKey = tuple[str, str, str]
"""(method, key_a, key_b) of a candidate edge, key_a < key_b."""
Block = Hashable
"""A block id: a Levenshtein token, or an LSH (band, code)."""


@dataclass(frozen=True)
class IndexedKey:
    """One key of the blocking index: its stats, and the blocks it falls in (its Levenshtein
    tokens; its LSH bucket code per band, empty while the embedding step is off)."""

    stats: KeyStats
    tokens: tuple[str, ...]
    band_codes: tuple[int, ...]

    @property
    def key(self) -> str:
        return self.stats.key

    def blocks(self, method: str) -> Iterable[Block]:
        """The blocks of the similarity step `method` this key is in."""
        return self.tokens if method == LEVENSHTEIN else enumerate(self.band_codes)


@dataclass
class BlockingIndex:
    """What the similarity steps know of a collection's keys, kept between runs so that a
    re-run compares only what changed: every key with its stats and blocks, and every
    candidate edge (a pair that passed the guards and the threshold of a similarity step,
    in a block within `max_block`), with its score."""

    keys: dict[str, IndexedKey] = field(default_factory=dict)
    edges: dict[EdgeKey, float] = field(default_factory=dict)


@dataclass(frozen=True)
class BlockingReport:
    """What one run of the similarity steps did: keys in all, new, with changed stats,
    removed, re-blocked (compared against their blocks), and the pairs compared per step.
    `full`: there was no index to start from, so every key was blocked."""

    keys_total: int
    keys_new: int
    keys_changed: int
    keys_removed: int
    keys_reblocked: int
    comparisons: dict[str, int]
    full: bool

    def details(self) -> dict[str, object]:
        """The figures as a stage outcome's details."""
        return {
            "blocking": "full" if self.full else "incremental",
            "keys_total": self.keys_total,
            "keys_new": self.keys_new,
            "keys_changed": self.keys_changed,
            "keys_removed": self.keys_removed,
            "keys_reblocked": self.keys_reblocked,
            "comparisons": self.comparisons,
        }


@dataclass
class IndexedResolution:
    """A resolution with the blocking index it was made from and what making it cost."""

    resolution: Resolution
    index: BlockingIndex
    report: BlockingReport


def key_tokens(key: str) -> tuple[str, ...]:
    """The Levenshtein blocking tokens of a key: its words of 4+ characters and its
    4-character prefix, sorted."""
    return tuple(sorted({w for w in key.split() if len(w) >= 4} | {key[:4]}))


def _band_codes(vectors: np.ndarray, cfg: ResolutionConfig) -> list[tuple[int, ...]]:
    """Random-hyperplane LSH: per band, `lsh_bits` sign bits of projections on planes drawn
    from `seed`. Each vector is projected on its own, so a key's codes never depend on the
    batch it was embedded in (the full and the incremental path give the same codes)."""
    rng = np.random.default_rng(cfg.seed)
    planes = np.hstack(
        [rng.standard_normal((vectors.shape[1], cfg.lsh_bits)) for _ in range(cfg.lsh_bands)]
    )
    weights = 1 << np.arange(cfg.lsh_bits)
    codes = []
    for vector in np.asarray(vectors, np.float64):
        bits = (vector @ planes > 0).reshape(cfg.lsh_bands, cfg.lsh_bits)
        codes.append(tuple((bits @ weights).tolist()))
    return codes


def _cosines(pairs: Sequence[Pair], vectors: Mapping[str, np.ndarray]) -> list[float]:
    """Cosine of each pair of normalised vectors: float32 components multiplied exactly in
    float64 and summed row by row, so a pair's score is the same in whatever batch it is
    computed."""
    scores: list[float] = []
    for start in range(0, len(pairs), COSINE_CHUNK):
        chunk = pairs[start : start + COSINE_CHUNK]
        left = np.array([vectors[a] for a, _ in chunk], np.float64)
        right = np.array([vectors[b] for _, b in chunk], np.float64)
        scores.extend((left * right).sum(axis=1).tolist())
    return scores


def _eligible(size: int, cfg: ResolutionConfig) -> bool:
    """A block is compared when it has a pair and is not too common (`max_block`)."""
    return 1 < size <= cfg.max_block


def _members(entries: Iterable[IndexedKey], method: str) -> dict[Block, list[str]]:
    members: dict[Block, list[str]] = defaultdict(list)
    for entry in entries:
        for block in entry.blocks(method):
            members[block].append(entry.key)
    return members


def _pair(a: str, b: str) -> Pair:
    return (a, b) if a < b else (b, a)


def _pairs_to_compare(
    members: Mapping[Block, list[str]],
    old_sizes: Mapping[Block, int],
    reblock: set[str],
    cfg: ResolutionConfig,
) -> list[Pair]:
    """The pairs a run must compare: in every block within the limits, each re-blocked key
    with every other member, and every pair of a block the limits did not admit before (it
    was over `max_block` and removals shrank it). Pairs of unchanged keys in a block that
    was admitted before were compared then, and their edges are kept."""
    pairs: set[Pair] = set()
    for block, keys in members.items():
        if not _eligible(len(keys), cfg):
            continue
        if _eligible(old_sizes.get(block, 0), cfg):
            pairs.update(_pair(a, b) for a in keys if a in reblock for b in keys if b != a)
        else:
            pairs.update(_pair(a, b) for i, a in enumerate(keys) for b in keys[i + 1 :])
    return sorted(pairs)


def _kept_edges(
    previous: BlockingIndex,
    entries: Mapping[str, IndexedKey],
    sizes: Mapping[str, Mapping[Block, int]],
    reblock: set[str],
    cfg: ResolutionConfig,
) -> dict[EdgeKey, float]:
    """The stored edges still valid: of a step still on, between two keys that are still
    there and not re-blocked, that still share a block within the limits."""
    kept: dict[EdgeKey, float] = {}
    for edge, score in previous.edges.items():
        method, a, b = edge
        stale = method not in sizes or a in reblock or b in reblock
        if stale or a not in entries or b not in entries:
            continue
        shared = set(entries[a].blocks(method)) & set(entries[b].blocks(method))
        if any(_eligible(sizes[method].get(block, 0), cfg) for block in shared):
            kept[edge] = score
    return kept


Scorer = Callable[[Sequence[Pair]], list[float]]
"""Similarity of each pair of keys, in order."""


def _levenshtein_scores(pairs: Sequence[Pair]) -> list[float]:
    return [Levenshtein.normalized_similarity(a, b) for a, b in pairs]


def _scored_edges(
    method: str,
    pairs: Sequence[Pair],
    entries: Mapping[str, IndexedKey],
    score: Scorer,
    threshold: float,
    cfg: ResolutionConfig,
) -> dict[EdgeKey, float]:
    """The pairs that pass the guards and the step's threshold, with their rounded scores
    (only pairs the guards admit are scored, so only their keys are embedded)."""
    guards: dict[str, Guard | None] = {}
    for key in {k for pair in pairs for k in pair}:
        guards[key] = _guard(entries[key].stats, cfg)
    allowed = [(a, b) for a, b in pairs if guards[a] is not None and guards[a] == guards[b]]
    return {
        (method, a, b): round(value, 4)
        for (a, b), value in zip(allowed, score(allowed), strict=True)
        if value > threshold
    }


class _Vectors:
    """Name embeddings of keys, each asked of `embed` at most once per run."""

    def __init__(self, embed: Callable[[Sequence[str]], np.ndarray]) -> None:
        self.embed = embed
        self.known: dict[str, np.ndarray] = {}

    def __call__(self, keys: Iterable[str]) -> dict[str, np.ndarray]:
        missing = sorted(set(keys) - self.known.keys())
        if missing:
            vectors = np.asarray(self.embed(missing), np.float32)
            self.known.update(zip(missing, vectors, strict=True))
        return self.known


def update_index(
    previous: BlockingIndex,
    stats: Mapping[str, KeyStats],
    embed: Callable[[Sequence[str]], np.ndarray] | None,
    cfg: ResolutionConfig,
) -> tuple[BlockingIndex, BlockingReport]:
    """The blocking index of `stats`, made from `previous` by re-blocking only the keys
    that are new or whose type changed (the only stat the guards read; a new mention count
    changes no comparison), and by comparing the blocks the change let in.

    Equal to `update_index(BlockingIndex(), stats, ...)` (the full build) when `previous`
    was made with the same `cfg` and embeddings; the caller starts from an empty index
    otherwise. Removed keys drop their edges; a block that grows over `max_block` drops the
    edges it alone carried, one that shrinks under it has all its pairs compared."""
    old = previous.keys
    new = stats.keys() - old.keys()
    changed = {k for k in stats.keys() & old.keys() if old[k].stats != stats[k]}
    reblock = new | {k for k in changed if old[k].stats.entity_type != stats[k].entity_type}
    scorers: dict[str, tuple[Scorer, float]] = {LEVENSHTEIN: (_levenshtein_scores, cfg.theta_str)}
    fresh_codes: dict[str, tuple[int, ...]] = {}
    if cfg.use_embeddings and embed is not None:
        vectors = _Vectors(embed)
        scorers[EMBEDDING] = (
            lambda pairs: _cosines(pairs, vectors(k for pair in pairs for k in pair)),
            cfg.theta_ctx,
        )
        if new:
            ordered = sorted(new)
            known = vectors(ordered)
            fresh_codes = dict(
                zip(ordered, _band_codes(np.array([known[k] for k in ordered]), cfg), strict=True)
            )
    entries = {
        key: IndexedKey(
            s,
            old[key].tokens if key in old else key_tokens(key),
            fresh_codes.get(key, ()) if key in new else old[key].band_codes,
        )
        for key, s in sorted(stats.items())
    }
    methods = [m for m in SIMILARITY_STEPS if m in scorers]
    members = {m: _members(entries.values(), m) for m in methods}
    sizes = {m: {block: len(keys) for block, keys in members[m].items()} for m in methods}
    edges = _kept_edges(previous, entries, sizes, reblock, cfg)
    comparisons: dict[str, int] = {}
    for method in methods:
        old_sizes = Counter(b for entry in old.values() for b in entry.blocks(method))
        pairs = _pairs_to_compare(members[method], old_sizes, reblock, cfg)
        comparisons[method] = len(pairs)
        score, threshold = scorers[method]
        edges.update(_scored_edges(method, pairs, entries, score, threshold, cfg))
    report = BlockingReport(
        keys_total=len(entries),
        keys_new=len(new),
        keys_changed=len(changed),
        keys_removed=len(old.keys() - stats.keys()),
        keys_reblocked=len(reblock),
        comparisons=comparisons,
        full=not old,
    )
    return BlockingIndex(entries, dict(sorted(edges.items()))), report


def _replay(
    index: BlockingIndex,
    cannot_link: Iterable[tuple[str, str]],
    must_link: Iterable[tuple[str, str]],
) -> _UnionFind:
    """Unite the keys in one defined order, the same for a full and an incremental run:
    must-links (sorted), Levenshtein edges, surnames, acronyms, embedding edges; each
    similarity step strongest edge first (then by keys).

    The order decides which of two merges a cannot-link keeps, and which link a key's
    same_as row records (its first union). Strongest first is our choice (the paper is
    silent): a conflict keeps the better-supported merge, and a key's row records its
    strongest link of the step that joined it. Before the index, Levenshtein pairs were
    united in the iteration order of a set of tokens, which changed with PYTHONHASHSEED."""
    stats = {key: entry.stats for key, entry in index.keys.items()}
    cannot = {frozenset((normalize_name(a), normalize_name(b))) for a, b in cannot_link}
    uf = _UnionFind(sorted(stats), cannot)
    forced = {_pair(normalize_name(a), normalize_name(b)) for a, b in must_link}
    for a, b in sorted(forced):
        if a in stats and b in stats:
            uf.union(a, b, "must_link", 1.0, forced=True)
    by_method: dict[str, list[tuple[float, str, str]]] = defaultdict(list)
    for (method, a, b), score in index.edges.items():
        by_method[method].append((-score, a, b))
    for method, rules in ((LEVENSHTEIN, (_surnames, _acronyms)), (EMBEDDING, ())):
        for negative, a, b in sorted(by_method[method]):
            uf.union(a, b, method, -negative)
        for rule in rules:
            rule(stats, uf)
    return uf


def resolve_incremental(
    collection: str,
    surfaces: Iterable[tuple[str, str]],
    previous: BlockingIndex | None,
    embed: Callable[[Sequence[str]], np.ndarray] | None = None,
    cfg: ResolutionConfig = ResolutionConfig(),
    cannot_link: Iterable[tuple[str, str]] = (),
    must_link: Iterable[tuple[str, str]] = (),
) -> IndexedResolution:
    """Run the cascade over (surface, type) observations starting from the `previous`
    blocking index (None: block every key); constraints name keys or surfaces.

    Only the similarity steps' blocking is incremental; the surname and acronym rules are
    linear passes over the keys and are recomputed whole, and every edge is replayed into
    a fresh union-find, so the result is the full cascade's for the same inputs."""
    stats = collect_keys(surfaces)
    index, report = update_index(previous or BlockingIndex(), stats, embed, cfg)
    uf = _replay(index, cannot_link, must_link)
    return IndexedResolution(_resolution(collection, stats, uf), index, report)


def resolve(
    collection: str,
    surfaces: Iterable[tuple[str, str]],
    embed: Callable[[Sequence[str]], np.ndarray] | None = None,
    cfg: ResolutionConfig = ResolutionConfig(),
    cannot_link: Iterable[tuple[str, str]] = (),
    must_link: Iterable[tuple[str, str]] = (),
) -> Resolution:
    """Run the whole cascade over (surface, type) observations; constraints name keys or
    surfaces."""
    return resolve_incremental(
        collection, surfaces, None, embed, cfg, cannot_link, must_link
    ).resolution


def _surnames(stats: dict[str, KeyStats], uf: _UnionFind) -> None:
    """A one-word Person key joins the one multi-word Person key it is the surname of."""
    full_names: dict[str, list[str]] = defaultdict(list)
    for key, s in sorted(stats.items()):
        words = key.split()
        if len(words) > 1 and s.entity_type == "Person":
            full_names[words[-1]].append(key)
    for key, s in sorted(stats.items()):
        owners = full_names.get(key, [])
        if " " not in key and s.entity_type == "Person" and len(owners) == 1:
            uf.union(key, owners[0], "person_surname", 1.0)


def _resolution(collection: str, stats: dict[str, KeyStats], uf: _UnionFind) -> Resolution:
    groups: dict[str, list[str]] = defaultdict(list)
    for key in sorted(stats):
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
