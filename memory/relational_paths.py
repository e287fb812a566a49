"""Relational paths of GRAM's Search (Eq. 3): simple paths of at most L facts between entities.

    P_{i,k} = { v_i -r1-> v_j … -rL-> v_k  in  G_t }

Paths are sequences of facts; each step may follow a fact in either direction (the paper's
Eq. 3 is written directed, but a bridge such as "Harborview Office located in Rotterdam"
must be usable from Rotterdam as well, so traversal ignores direction while every fact is
still linearized as stored, `[s] -[p]-> [o]`). A path never visits an entity twice (no
cycles, no self-loop facts); parallel facts between the same two entities give distinct
paths.

Between two entities the search is bidirectional and bounded: simple partial paths of at
most ⌈L/2⌉ facts grow from the source and of at most ⌊L/2⌋ facts from the target, level by
level through the graph's CSR rows (`graph.edges(entity)`), and meet in the middle. A path
of n facts is joined at exactly one meeting entity, the one ⌈n/2⌉ facts from the source,
so every path is produced once. Each side stops growing after `limit` partial paths (a
hub guard; the paper has no such bound), and the deepest level is the one cut short, so
short paths are never lost to the bound before long ones.
Between every pair of several entities (`paths_among`, GRAM's anchors), and from each of
them alone (GRAM's neighbourhoods), the searches share one `PathTrees`: each entity's
levels are grown once, without stop, avoided entity or bound, and each search selects its
rows from them (`_cut_rows`): the same paths, in the same order and with the same
truncation, as each search run alone, for one growth per entity instead of one per
search. A level is grown only as far as the searches cut from it need (a search cut at
its limit keeps the first rows of its deepest level), and the halves of every pair are
joined at once per path length. At 100k facts this took GRAM's own work per query (its
search, credits and ranking, interleaved with the former code on a loaded machine) from
~34-47 ms to ~14-22 ms.

The search runs on arrays: the partial paths of one length are two integer matrices
(entities, facts; a row per path), a level grows by repeating each row over its end's CSR
row, and the halves meet by sorting the backward ends; paths become `RelationalPath`s
only when read one by one. It finds the paths in the order of the edge-by-edge search it
replaced (`tests/memory/relational_paths_reference.py`, checked path for path).

Scoring (the paper has none): a path's walk mass (`Search.masses`), the weight of the
entity it starts from times the transition probability of each of its steps (given by the
graph: `memory.link_graph.LinkGraph.steps`), optionally plus the same product walked
from its other end, so a path is as strong as a random walk along it is likely: specific
(rarely shared) nodes make strong bridges, hubs weak ones, and no step has to be about
the query (the second passage of a two-hop question is about the bridge, not the query).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from memory.csr import ranges
from memory.graph import MemoryGraph

Steps = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""(vertices, edges) -> the probability of leaving each vertex by the edge beside it."""


@dataclass(frozen=True)
class RelationalPath:
    """Entities v0 … vn and the facts f1 … fn joining consecutive ones (graph positions)."""

    entities: tuple[int, ...]
    facts: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.facts)

    def reversed(self) -> RelationalPath:
        return RelationalPath(self.entities[::-1], self.facts[::-1])


@dataclass(frozen=True)
class PathArrays:
    """Paths of one length n, a row each: `entities` (m x n+1), `facts` (m x n)."""

    entities: np.ndarray
    facts: np.ndarray

    @classmethod
    def start(cls, entity: int) -> PathArrays:
        return cls(np.array([[entity]], np.int64), np.zeros((1, 0), np.int64))

    def __len__(self) -> int:
        return len(self.entities)

    def take(self, rows: np.ndarray) -> PathArrays:
        return PathArrays(self.entities[rows], self.facts[rows])


@dataclass
class Search:
    """Paths found by one bounded search, shortest first (`groups`: one per length, in
    the order found), and whether a side hit its partial-path limit."""

    groups: list[PathArrays] = field(default_factory=list)
    truncated: bool = False

    def __len__(self) -> int:
        return sum(len(g) for g in self.groups)

    @functools.cached_property
    def paths(self) -> list[RelationalPath]:
        """Every path as a `RelationalPath`, shortest first."""
        return [
            RelationalPath(tuple(entities), tuple(facts))
            for group in self.groups
            for entities, facts in zip(group.entities.tolist(), group.facts.tolist(), strict=True)
        ]

    def path(self, index: int) -> RelationalPath:
        """The `index`-th path (shortest first), made alone."""
        for group in self.groups:
            if index < len(group):
                return RelationalPath(
                    tuple(group.entities[index].tolist()), tuple(group.facts[index].tolist())
                )
            index -= len(group)
        raise IndexError(index)

    def lengths(self) -> dict[int, int]:
        """Number of paths per length."""
        counts: dict[int, int] = {}
        for group in self.groups:
            n = group.facts.shape[1]
            counts[n] = counts.get(n, 0) + len(group)
        return counts

    def facts(self) -> np.ndarray:
        """The facts on any path, each once, sorted."""
        flat = [g.facts.ravel() for g in self.groups]
        return np.unique(np.concatenate([np.zeros(0, np.int64), *flat]))

    def masses(self, steps: Steps, start: float, end: float = 0.0) -> np.ndarray:
        """Per path (in `path` order): `start` x the product of its steps' transition
        probabilities from its first entity, plus `end` x that product from its last."""
        masses = [path_masses(g.entities, g.facts, steps, start, end) for g in self.groups]
        return np.concatenate(masses or [np.zeros(0)])


def _children(
    graph: MemoryGraph, frontier: PathArrays, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every simple one-fact extension of the frontier's `rows`: (parent row, fact, new
    end) per extension, in the order of `rows`, then of each end's CSR row.

    The far end is read once per fact (the head, then the tail where the path leaves by
    the head) and a path's entities are compared column by column: numpy's `any` over a
    row of two or three entities, and reading both ends of every fact, cost ~2x as much
    on GRAM's levels at 1M facts (the same extensions)."""
    incidence = graph.entity_facts
    ends = frontier.entities[rows, -1]
    first = incidence.indptr[ends]
    degree = incidence.indptr[ends + 1] - first
    parent = np.repeat(rows, degree)
    edges = ranges(first, degree)
    facts = incidence.indices[edges].astype(np.int64)
    forward = incidence.data[edges] > 0
    others = np.asarray(graph.fact_head[facts], np.int64)
    others[forward] = graph.fact_tail[facts[forward]]
    valid = np.ones(len(parent), bool)
    for column in frontier.entities.T:
        valid &= column[parent] != others
    return parent[valid], facts[valid], others[valid]


def _extended(
    frontier: PathArrays, parent: np.ndarray, facts: np.ndarray, others: np.ndarray
) -> PathArrays:
    """The paths of `frontier`'s rows `parent`, each one fact (`facts`, to `others`) longer."""
    return PathArrays(
        np.concatenate([frontier.entities[parent], others[:, None]], axis=1),
        np.concatenate([frontier.facts[parent], facts[:, None]], axis=1),
    )


def _grow(
    graph: MemoryGraph, start: int, depth: int, stop_at: int | None, avoid: int | None, limit: int
) -> Search:
    """Simple paths from `start` of 0 … `depth` facts, level by level, at most `limit`.
    A path may end at `stop_at` but not go on from it; it never enters `avoid`. Within a
    level, paths are in the order of their parent, then of the parent end's CSR row."""
    levels = [PathArrays.start(start)]
    count = 1
    for _ in range(depth):
        frontier = levels[-1]
        ends = frontier.entities[:, -1]
        rows = np.flatnonzero(ends != stop_at) if stop_at is not None else np.arange(len(ends))
        parent, facts, others = _children(graph, frontier, rows)
        if avoid is not None:
            away = others != avoid
            parent, facts, others = parent[away], facts[away], others[away]
        room = limit - count
        truncated = len(parent) > room
        if truncated:
            parent, facts, others = parent[:room], facts[:room], others[:room]
        levels.append(_extended(frontier, parent, facts, others))
        count += len(parent)
        if truncated:
            return Search(levels, truncated=True)
    return Search(levels)


@dataclass
class _Tree:
    """Every simple path from one entity, level by level, grown on demand with neither a
    stop, an entity to avoid nor a limit: the levels `_grow` makes from that entity for
    any stop, avoided entity and limit are row selections of these (`_cut_rows`), so a
    search between many pairs grows each entity's levels once instead of once per pair.

    A level is grown as a prefix (the children of the level above's first rows, in
    order) as far as a search needs it: a search cut at its limit keeps the first rows of
    its deepest level only, and growing all of a walk's third level for the 600 rows it
    kept of ~90,000 took ~10 ms of a query at 100k facts."""

    graph: MemoryGraph
    levels: list[PathArrays]
    parents: list[np.ndarray] = field(default_factory=list)
    """Per level from the first: each row's parent row in the level above."""
    done: list[int] = field(default_factory=list)
    """Per level from the first: the rows of the level above whose children it holds."""
    cuts: dict[tuple[int, int], _Cut | None] = field(default_factory=dict)
    """Per (depth, limit): the search with neither stop nor avoided entity (`_Cut.of`)."""

    def grow(self, depth: int, upto: int) -> PathArrays:
        """Level `depth` holding (at least) the children of the first `upto` rows of the
        level above, which must be complete."""
        if len(self.levels) == depth:
            empty = (np.zeros((0, depth + 1), np.int64), np.zeros((0, depth), np.int64))
            self.levels.append(PathArrays(*empty))
            self.parents.append(np.zeros(0, np.int64))
            self.done.append(0)
        done = self.done[depth - 1]
        if upto > done:
            frontier = self.levels[depth - 1]
            parent, facts, others = _children(self.graph, frontier, np.arange(done, upto))
            grown = _extended(frontier, parent, facts, others)
            level = self.levels[depth]
            if len(level):
                grown = PathArrays(
                    np.concatenate([level.entities, grown.entities]),
                    np.concatenate([level.facts, grown.facts]),
                )
                parent = np.concatenate([self.parents[depth - 1], parent])
            self.levels[depth] = grown
            self.parents[depth - 1] = parent
            self.done[depth - 1] = upto
        return self.levels[depth]

    def complete(self, depth: int) -> bool:
        """Whether level `depth` holds the children of every row of the level above."""
        return self.done[depth - 1] == len(self.levels[depth - 1])

    def grown_rows(self, depth: int) -> int:
        """Rows of the levels above `depth` (0 … depth - 1)."""
        return sum(len(level) for level in self.levels[:depth])


@dataclass(frozen=True)
class _Cut:
    """A tree's search with neither stop nor avoided entity (`_cut_rows`), and what
    decides whether a search with a stop or an avoided entity selects the same rows: the
    ends of the rows it extends, the ends of the rows it keeps below the start, and the
    end of the first row past its cut (-1: not truncated)."""

    kept: list[np.ndarray]
    truncated: bool
    extended_ends: np.ndarray
    kept_ends: np.ndarray
    after_end: int

    @classmethod
    def of(cls, tree: _Tree, depth: int, limit: int) -> _Cut | None:
        """The cut of `tree` for (depth, limit), made once per tree."""
        key = (depth, limit)
        if key not in tree.cuts:
            cut = _cut_rows_grown(tree, depth, None, None, limit)
            if cut is None:
                tree.cuts[key] = None
            else:
                kept, truncated, after = cut
                ends = [tree.levels[d].entities[rows, -1] for d, rows in enumerate(kept)]
                after_end = int(tree.levels[len(kept) - 1].entities[after, -1]) if truncated else -1
                none = np.zeros(0, np.int64)
                tree.cuts[key] = cls(
                    kept,
                    truncated,
                    np.concatenate([none, *ends[:-1]]),
                    np.concatenate([none, *ends[1:]]),
                    after_end,
                )
        return tree.cuts[key]

    def holds(self, stop_at: int | None, avoid: int | None) -> bool:
        """Whether the search with `stop_at` and `avoid` keeps these rows: no row it
        extends ends at `stop_at` (it would extend every one), and no row it keeps ends at
        `avoid` (it drops none), nor, where it was truncated, the first past the cut (it
        is still truncated)."""
        if stop_at is not None and bool((self.extended_ends == stop_at).any()):
            return False
        return avoid is None or (avoid != self.after_end and not (self.kept_ends == avoid).any())

    def narrowed(self, tree: _Tree, stop_at: int | None, avoid: int | None) -> list[np.ndarray]:
        """The rows of the search with `stop_at` and `avoid` where this one was not
        truncated: its levels are then complete, so that search's rows are these less
        those whose parent it dropped or stopped at, or that end at `avoid` (fewer rows,
        so it is not truncated either)."""
        kept = [self.kept[0]]
        for d, rows in enumerate(self.kept[1:], 1):
            above = tree.levels[d - 1]
            extended = np.zeros(len(above), bool)
            ends = above.entities[kept[-1], -1]
            extended[kept[-1]] = True if stop_at is None else ends != stop_at
            chosen = extended[tree.parents[d - 1][rows]]
            if avoid is not None:
                chosen &= tree.levels[d].entities[rows, -1] != avoid
            kept.append(rows[chosen])
        return kept


def _cut_rows(
    tree: _Tree, depth: int, stop_at: int | None, avoid: int | None, limit: int
) -> tuple[list[np.ndarray], bool] | None:
    """`_grow(tree.graph, start, depth, stop_at, avoid, limit)` as the rows of the tree's
    levels it holds (level 0 … its last, each in order) and whether it was truncated;
    None where a level would have to be grown past `limit` (`_grow` must run alone).

    Most searches of a query never meet their stop or avoided entity within the rows
    they keep: those take the rows of the tree's search with neither (`_Cut`, made once
    per tree), the rest select their own (`_cut_rows_grown`)."""
    base = _Cut.of(tree, depth, limit)
    if base is not None and base.holds(stop_at, avoid):
        return base.kept, base.truncated
    if base is not None and not base.truncated:
        return base.narrowed(tree, stop_at, avoid), False
    cut = _cut_rows_grown(tree, depth, stop_at, avoid, limit)
    return None if cut is None else cut[:2]


def _cut_rows_grown(
    tree: _Tree, depth: int, stop_at: int | None, avoid: int | None, limit: int
) -> tuple[list[np.ndarray], bool, int] | None:
    """`_cut_rows` selected from the tree's levels, grown as far as needed, and the first
    row past the cut (-1 where not truncated).

    `_grow`'s level is the tree's level restricted to the rows whose parent `_grow` kept
    and may extend (its end is not `stop_at`) and whose end is not `avoid`, in the same
    order (parent, then CSR row), cut at the same room: so the prefix of the tree's level
    that holds more than the room of such rows holds `_grow`'s, and the tree's level is
    grown only that far (first to the parents whose degrees sum past the room, then
    doubling). A level is started from the tree's whole level above only while that
    level is within `limit` rows; past that (a hub beyond `stop_at` or `avoid`), `_grow`
    runs itself, so the shared levels never outgrow what one search would have grown."""
    kept = [np.zeros(1, np.int64)]
    count = 1
    indptr = tree.graph.entity_facts.indptr
    for d in range(1, depth + 1):
        if len(tree.levels) <= d and tree.grown_rows(d) > limit:
            return None
        above_level = tree.levels[d - 1]
        above = kept[-1]
        if stop_at is not None:
            above = above[above_level.entities[above, -1] != stop_at]
        extendable = None  # every row of the level above
        if len(above) < len(above_level):
            extendable = np.zeros(len(above_level), bool)
            extendable[above] = True
        room = limit - count
        wanted = room + 1
        while True:
            if len(tree.levels) <= d or not tree.complete(d):
                tree.grow(d, _parents_for(tree, d, extendable, indptr, wanted))
            level = tree.levels[d]
            mask = None if extendable is None else extendable[tree.parents[d - 1]]
            if avoid is not None:
                away = level.entities[:, -1] != avoid
                mask = away if mask is None else mask & away
            rows = np.arange(len(level)) if mask is None else np.flatnonzero(mask)
            if len(rows) > room:
                kept.append(rows[:room])
                return kept, True, int(rows[room])
            if tree.complete(d):
                break
            wanted = 2 * wanted
        kept.append(rows)
        count += len(rows)
    return kept, False, -1


def _parents_for(
    tree: _Tree, depth: int, extendable: np.ndarray | None, indptr: np.ndarray, wanted: int
) -> int:
    """How many of the first rows of level `depth - 1` to grow level `depth` from so that
    their `extendable` rows' ends (None: every row's) have at least `wanted` edges in all
    (every row where they have fewer; `indptr`: the graph's incidence rows), and at least
    as many as are grown already."""
    ends = tree.levels[depth - 1].entities[:, -1]
    degree = indptr[ends + 1] - indptr[ends]
    if extendable is not None:
        degree = np.where(extendable, degree, 0)
    reach = np.searchsorted(np.cumsum(degree), wanted) + 1
    return max(min(int(reach), len(ends)), tree.done[depth - 1] if depth <= len(tree.done) else 0)


@dataclass
class _Side:
    """One side of a search as rows of path arrays per level: a tree's levels cut for one
    search (`_cut_rows`), or the levels of a search that ran alone (every row)."""

    levels: list[PathArrays]
    rows: list[np.ndarray]
    truncated: bool

    @classmethod
    def of(
        cls, tree: _Tree, depth: int, stop_at: int | None, avoid: int | None, limit: int
    ) -> _Side:
        cut = _cut_rows(tree, depth, stop_at, avoid, limit)
        if cut is None:
            start = int(tree.levels[0].entities[0, 0])
            alone = _grow(tree.graph, start, depth, stop_at, avoid, limit)
            rows = [np.arange(len(level)) for level in alone.groups]
            return cls(alone.groups, rows, alone.truncated)
        return cls(tree.levels, *cut)


class PathTrees:
    """GRAM's searches of one query on shared levels: each entity's simple paths are
    grown level by level once (`_Tree`), and every search between two of them
    (`among`) or from one (`walk`) selects its rows from those levels: the same paths,
    in the same order and with the same truncation, as each search run alone."""

    def __init__(self, graph: MemoryGraph) -> None:
        self.graph = graph
        self.trees: dict[int, _Tree] = {}

    def tree(self, entity: int) -> _Tree:
        if entity not in self.trees:
            self.trees[entity] = _Tree(self.graph, [PathArrays.start(entity)])
        return self.trees[entity]

    def walk(self, source: int, max_length: int, limit: int) -> Search:
        """`paths_from(graph, source, max_length, limit)` from the source's tree."""
        side = _Side.of(self.tree(source), max_length, None, None, limit)
        levels = [side.levels[d].take(rows) for d, rows in enumerate(side.rows) if d]
        return Search([level for level in levels if len(level)], side.truncated)

    def among(
        self,
        entities: list[int],
        max_length: int,
        limit: int,
        wanted: Callable[[int, int], bool] | None = None,
    ) -> list[Search]:
        """`paths_between` of every pair of `entities` (in `itertools.combinations`
        order); an empty `Search` for a pair (i, j) of positions that `wanted` refuses.
        The halves of every pair are joined at once per path length (`_joins`)."""
        positions = list(itertools.combinations(range(len(entities)), 2))
        pairs = [(entities[i], entities[j]) for i, j in positions]
        sides = [
            (
                _Side.of(self.tree(s), (max_length + 1) // 2, t, None, limit),
                _Side.of(self.tree(t), max_length // 2, None, s, limit),
            )
            if s != t and max_length >= 1 and (wanted is None or wanted(*position))
            else None
            for (s, t), position in zip(pairs, positions, strict=True)
        ]
        groups: list[list[PathArrays]] = [[] for _ in pairs]
        for n in range(1, max_length + 1):
            for p, joined in _joins(sides, (n + 1) // 2, n // 2, self.graph.n_entities):
                groups[p].append(joined)
        return [
            Search(found, pair[0].truncated or pair[1].truncated) if pair else Search()
            for found, pair in zip(groups, sides, strict=True)
        ]


class _Stack:
    """Several path arrays of one length addressed as one, their rows numbered part after
    part, without copying them whole (a level of a busy anchor holds ~20,000 paths, of
    which a join keeps a few hundred)."""

    def __init__(self, parts: list[PathArrays]) -> None:
        self.parts = parts
        self.offsets = np.cumsum([0, *(len(part) for part in parts)])

    def ends(self) -> np.ndarray:
        """Every path's last entity."""
        return np.concatenate([part.entities[:, -1] for part in self.parts])

    def take(self, rows: np.ndarray) -> PathArrays:
        """The paths of `rows`, in order."""
        if len(self.parts) == 1:
            return self.parts[0].take(rows)
        first = self.parts[0]
        entities = np.empty((len(rows), first.entities.shape[1]), np.int64)
        facts = np.empty((len(rows), first.facts.shape[1]), np.int64)
        part_of = np.searchsorted(self.offsets, rows, "right") - 1
        by_part = np.argsort(part_of, kind="stable")
        bounds = np.searchsorted(part_of[by_part], np.arange(len(self.parts) + 1)).tolist()
        for p, part in enumerate(self.parts):
            if bounds[p + 1] > bounds[p]:
                mine = by_part[bounds[p] : bounds[p + 1]]
                local = rows[mine] - self.offsets[p]
                entities[mine], facts[mine] = part.entities[local], part.facts[local]
        return PathArrays(entities, facts)


def _stacked(parts: list[tuple[PathArrays, np.ndarray]]) -> tuple[_Stack, np.ndarray, list[int]]:
    """The rows of several path arrays of one length as one: the distinct arrays stacked,
    each part's rows offset into them, concatenated in order (one addition for all parts:
    the ~25 pairs of a query share a few arrays), and each part's number of rows."""
    offsets: dict[int, int] = {}
    distinct: list[PathArrays] = []
    size = 0
    starts = []
    for arrays, _ in parts:
        if id(arrays) not in offsets:
            offsets[id(arrays)] = size
            distinct.append(arrays)
            size += len(arrays)
        starts.append(offsets[id(arrays)])
    sizes = [len(selected) for _, selected in parts]
    rows = np.concatenate([selected for _, selected in parts]) + np.repeat(starts, sizes)
    return _Stack(distinct), rows, sizes


def _joins(
    sides: list[tuple[_Side, _Side] | None], i: int, j: int, n_entities: int
) -> list[tuple[int, PathArrays]]:
    """Per pair (by position in `sides`) whose forward side reaches level `i` and backward
    side level `j`, its paths of i + j facts, if any: `_join` of its two halves, for every
    pair at once (the halves matched on (pair, meeting entity))."""
    pairs = [
        p
        for p, pair in enumerate(sides)
        if pair and i < len(pair[0].rows) and j < len(pair[1].rows)
    ]
    if not pairs:
        return []
    fronts = [(sides[p][0].levels[i], sides[p][0].rows[i]) for p in pairs]
    backs = [(sides[p][1].levels[j], sides[p][1].rows[j]) for p in pairs]
    front, f_rows, f_sizes = _stacked(fronts)
    back, b_rows, b_sizes = _stacked(backs)
    index = np.arange(len(pairs), dtype=np.int64)
    f_pair = np.repeat(index, f_sizes)
    b_pair = np.repeat(index, b_sizes)
    f, b = _meeting(front.ends()[f_rows], f_pair, back.ends()[b_rows], b_pair, n_entities)
    joined, kept = _glued(front.take(f_rows[f]), back.take(b_rows[b]))
    bounds = np.searchsorted(f_pair[f[kept]], np.arange(len(pairs) + 1))
    return [
        (p, PathArrays(joined.entities[lo:hi], joined.facts[lo:hi]))
        for p, lo, hi in zip(pairs, bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
        if hi > lo
    ]


def _meeting(
    ahead: np.ndarray, a_group: np.ndarray, behind: np.ndarray, b_group: np.ndarray, base: int
) -> tuple[np.ndarray, np.ndarray]:
    """The (ahead, behind) index pairs of one group whose ends (`ahead`, `behind`) are the
    same entity, ahead indices in order, then behind ones in order (`base`: more than any
    entity, to key an end by its group)."""
    if not len(ahead) or not len(behind):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    key = b_group * base + behind
    wanted = a_group * base + ahead
    # most halves meet no half of their group: a bitmap of the keys' low bits (8 bits or
    # more a backward half) lets through every key present and few others
    bits = (1 << max(10, (8 * len(behind)).bit_length())) - 1
    present = np.zeros(bits + 1, bool)
    present[key & bits] = True
    candidates = np.flatnonzero(present[wanted & bits])
    order = np.argsort(key, kind="stable")
    ends = key[order]
    meet = wanted[candidates]
    low = np.searchsorted(ends, meet, "left")
    # the end of each run of equal keys, read where a search landed (one search, not two)
    starts = np.flatnonzero(np.concatenate([[True], ends[1:] != ends[:-1]]))
    stops = np.append(starts[1:], len(ends))
    at = np.minimum(low, len(ends) - 1)
    count = np.where(ends[at] == meet, np.repeat(stops, stops - starts)[at] - low, 0)
    return np.repeat(candidates, count), order[ranges(low, count)]


def _unshared(ahead: np.ndarray, behind: np.ndarray) -> np.ndarray:
    """Per row, whether the halves `ahead` and `behind` (entities, meeting at their last)
    share no other entity, column by column as in `_children`."""
    shared = np.zeros(len(ahead), bool)
    for column in ahead.T:
        for other in behind[:, :-1].T:
            shared |= column == other
    return ~shared


def paths_between(
    graph: MemoryGraph, source: int, target: int, max_length: int, limit: int
) -> Search:
    """All simple paths of 1 … `max_length` facts from `source` to `target`, shortest first
    (bidirectional search; each side keeps at most `limit` partial paths).

    A path of n facts joins a forward half of ⌈n/2⌉ facts to a backward half of ⌊n/2⌋
    ending at the same entity and sharing no other: per forward half in order, the
    matching backward halves in theirs."""
    if source == target or max_length < 1:
        return Search()
    forward = _grow(graph, source, (max_length + 1) // 2, target, None, limit)
    backward = _grow(graph, target, max_length // 2, None, source, limit)
    return _met(forward, backward, max_length)


def paths_among(
    graph: MemoryGraph, entities: list[int], max_length: int, limit: int
) -> list[Search]:
    """`paths_between` of every pair of `entities` (in `itertools.combinations` order),
    the same searches, with each entity's levels grown once for all its pairs
    (`PathTrees.among`)."""
    return PathTrees(graph).among(entities, max_length, limit)


def _met(forward: Search, backward: Search, max_length: int) -> Search:
    """The paths of 1 … `max_length` facts joining the halves of a bidirectional search."""
    groups = []
    for n in range(1, max_length + 1):
        i, j = (n + 1) // 2, n // 2
        if i < len(forward.groups) and j < len(backward.groups):
            joined = _join(forward.groups[i], backward.groups[j])
            if len(joined):
                groups.append(joined)
    return Search(groups, forward.truncated or backward.truncated)


def _join(front: PathArrays, back: PathArrays) -> PathArrays:
    """Each forward half joined to each backward half that ends where it ends and shares
    no other entity with it, forward halves in order, then backward ones in order."""
    f, b = _meeting(
        front.entities[:, -1],
        np.zeros(len(front), np.int64),
        back.entities[:, -1],
        np.zeros(len(back), np.int64),
        0,
    )
    return _glued(front.take(f), back.take(b))[0]


def _glued(ahead: PathArrays, behind: PathArrays) -> tuple[PathArrays, np.ndarray]:
    """Each forward half with the backward half beside it (same end), read on through the
    backward one reversed, where the two share no other entity; and which pairs that kept."""
    kept = _unshared(ahead.entities, behind.entities)
    glued = PathArrays(
        np.concatenate([ahead.entities[kept], behind.entities[kept][:, -2::-1]], axis=1),
        np.concatenate([ahead.facts[kept], behind.facts[kept][:, ::-1]], axis=1),
    )
    return glued, kept


def paths_from(graph: MemoryGraph, source: int, max_length: int, limit: int) -> Search:
    """All simple paths of 1 … `max_length` facts starting at `source`, shortest first
    (at most `limit` partial paths, the empty one included)."""
    grown = _grow(graph, source, max_length, None, None, limit)
    return Search([g for g in grown.groups[1:] if len(g)], grown.truncated)


def reading_order(graph: MemoryGraph, path: RelationalPath) -> RelationalPath:
    """The path or its reverse, whichever follows more of its facts head to tail (ties keep
    the path as found), so its linearization reads as a chain `[a] -> [b] ; [b] -> [c]`."""
    forward = sum(
        int(graph.fact_head[f] == v) for f, v in zip(path.facts, path.entities[:-1], strict=True)
    )
    return path.reversed() if 2 * forward < len(path) else path


def path_masses(
    entities: np.ndarray,
    facts: np.ndarray,
    steps: Steps,
    start: float | np.ndarray,
    end: float | np.ndarray = 0.0,
) -> np.ndarray:
    """`Search.masses` of paths of one length, a row each (`start` and `end`: one weight
    for all, or one per row; the product from the last entity is added where `end` is not
    0)."""
    mass = start * np.prod(steps(entities[:, :-1], facts), axis=1)
    if np.any(end):
        back = end * np.prod(steps(entities[:, 1:], facts), axis=1)
        mass = np.where(np.not_equal(end, 0), mass + back, mass)
    return mass
