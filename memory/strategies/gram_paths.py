"""GRAM's structure-aware Search (`gram_paths`): relational paths of at most L edges between
the query's entities, over typed facts and the passage graph's untyped links, linearized
`[s] -[p]-> [o] ; …`; the segments on them ranked by the walk mass of the paths that
reach them and blended with the flat prior.

GRAM (papers/gram.md §4.1, Eq. 3) answers a search with the relational paths of length
≤ L among the entities of the query, linearized into text; its graph is built by an LLM
(entities, then relations among them). Our graph (`memory.link_graph`), LLM-free:

- GRAM's entity nodes V_t: the passage graph's nodes (`memory.passage_links`): entities,
  and the topic/title, phrase, session, speaker and day nodes as further untyped
  entities; segments are vertices too, as the evidence of untyped relations;
- GRAM's relation triplets E_t: the typed facts (relation extraction), and the untyped
  `mentioned_with` relation of two nodes a segment names (node – segment – node: the
  segment is its evidence; an entity – passage – title node chain is the bridge of a
  two-hop question), and `next_turn` between consecutive turns of a session. Hubs (nodes
  of more than `passage_links.HUB_SEGMENTS` segments) join no untyped relation.

The paper leaves L, the mapping from query to entities, path ranking and result limits
open. The choices made here:

- Query entities (anchors): the entities the query names (any alias as a normalised
  n-gram, GRAM's entity extraction + alignment at query time), the `FLAT_ANCHORS` (3)
  entities of the flat ranking's top segments and its `SEED_NODES` (5) seed nodes (the
  linkable passage nodes of those segments, by prior mass times specificity:
  `passage_links.seed_nodes`); where the query names no entity that joins an untyped
  relation (none, or only hubs), also the topic/title and phrase nodes it names. Anchors
  without any edge are dropped; with none left, the `FALLBACK_ANCHORS` (3) entities whose
  description is most similar to the query (cosine ≥ 0.5), as in the notes'
  `topk_nodes_by_similarity` fallback. An anchor weighs its seed mass: the prior mass of
  the top segments naming it times its specificity (0 for one no top segment names: it
  only ends paths, and two such anchors are not searched for paths between them, which
  would carry no mass; a fallback anchor weighs its cosine times its specificity). Named
  anchors at half the heaviest seed's weight cost MuSiQue 1 point (73.3 against 74.7).
- L = `MAX_LENGTH` = 4 edges: two untyped relations (A – passage – title – passage – B,
  MuSiQue's two-hop bridge) or up to four facts (the datasets need 2.4–2.65 supporting
  facts on average, Table 1).
- The search is the notes' `memory_search`: the simple paths of ≤ L edges joining two
  anchors (bidirectional, `memory.relational_paths`), and each anchor's neighbourhood,
  the paths of ≤ `WALK_LENGTH` (3, at most L) edges from it: anchor – segment – node –
  segment reaches the passage about the bridge entity that a top passage names. Each
  side of a search stops after `EXPANSION_LIMIT` (500) partial paths. The pairs joined
  are GRAM's, paths among the query's entities: each pair with an entity (or topic or
  phrase node) the query names, and every pair only where it names none (`_searched`).
  Joining every pair of anchors instead, the flat and seed anchors among themselves
  too, found the same figures on both dev sets (MuSiQue R@5 75.1, LoCoMo turn R@10 76.0,
  session-unit R@10 93.3; so did no pair at all: the neighbourhoods carry the gain
  there) for ~1 ms more of each query at 100k facts (own work 4.9 against 3.9 ms).
  Both kinds of search run on one `relational_paths.PathTrees` per query (each anchor's
  levels grown once and only as far as a search needs), finding the same paths as each
  search run alone.
- Path score (the paper has none): its walk mass, the anchor's weight times each step's
  transition probability in the passage graph's walk (`LinkGraph.steps`: edge weight
  over the vertex's weighted degree; a mention weighs the node's specificity, HippoRAG's
  1 / #segments, a phrase node's times 0.3, a fact its confidence times its ends' lesser
  specificity, a next turn 1), from either end for a path joining two anchors. No step has
  to match the query: the second passage of a two-hop question is about the bridge, not
  about what the question says, and the flat prior brings the relevance in the blend.
  MuSiQue dev R@5 (100 questions) at flat share 0.5 (hybrid 67.5), before (mean cosine of the path's
  statements x product of confidences, a segment by its best path, neighbourhoods only
  where no pair was joined): 67.9 at 0.7; paths from anchors of 1 edge: 67.3; of 3: 74.7.
- A segment scores the mass of the paths that credit it, summed as a walk's visits
  are: a neighbourhood path credits the segment it ends at (or those stating its last
  fact), a path joining two anchors every segment it passes through and those stating its
  facts. The first `CANDIDATES` by that sum are blended by its log with the flat `hybrid`
  ranking (`memory.traversal.blended`, the flat share per corpus kind pinned by the
  snapshot). Each lists the linearized paths of its `PATHS_PER_SEGMENT` (3) heaviest
  credits; the explanation's `top_paths` are the heaviest paths joining two anchors.

Paths are shown in reading order (the direction that follows most of their facts head to
tail), so a path found from an entity may be printed ending at it.

Options read from `query.options`: `max_length` (L), `seed_nodes`, `flat_share`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np

from memory.csr import row_entries
from memory.flat_prior import flat_prior, kept_per_query
from memory.graph import MemoryGraph, graph_of
from memory.link_graph import FACT, KIND_NAMES, LinkGraph, link_graph
from memory.linking import named_entities, positions, similar_entities
from memory.nearest import probes_of
from memory.passage_links import PassageLinks, named_nodes, passage_links, seed_nodes
from memory.relational_paths import (
    PathArrays,
    PathTrees,
    RelationalPath,
    Search,
    path_masses,
    reading_order,
)
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking
from memory.traversal import blended

FLAT_ANCHORS = 3
"""Entities of the flat ranking's top segments added to the named ones as anchors."""
SEED_NODES = 5
"""Passage nodes of the flat ranking's top segments added as anchors
(`passage_links.seed_nodes`; option `seed_nodes`). LoCoMo dev, first 300 questions, turn
R@10 at flat share 0.3 with 0 / 5 / 10 seed nodes: 65.2 / 76.2 / 74.1 (hybrid 65.9): the
seed nodes (sessions, days, specific phrases of the top turns) carry the gain."""
MAX_LENGTH = 4
EXPANSION_LIMIT = 500
"""Partial paths one side of a search grows at most (its deepest level is cut first, so
no shorter path is lost to the bound; a hub guard, the paper has none). With the passage
graph's untyped links every search of the 100k-fact bench reached 2000, and the joined
4-edge paths (~2000 a query) made most of the search, credits and ranking. Full dev
figures at 2000 / 1000 / 500 / 250: MuSiQue R@5 74.7 / 74.8 / 75.1 / 73.8, LoCoMo turn
R@10 76.0 / 76.0 / 76.0 / 74.9; own work a query at 100k facts (CPU, 30 queries
interleaved) 12.7 / 10.8 / 9.7 ms at 2000 / 1000 / 500."""
FALLBACK_ANCHORS = 3
WALK_LENGTH = 3
"""Edges of the paths searched from each anchor alone (node – segment – node – segment)."""

TOP_PATHS_EXPLAINED = 10
PATHS_PER_SEGMENT = 3
SEGMENTS_EXPLAINED = 20
"""Segments of the traversal's ranking whose paths are linearized (a blended top k lies
mostly within them); linearizing 50 cost ~3 ms a MuSiQue query."""
CANDIDATES = 200
"""Segments of the paths that are blended with the flat ranking."""


def gram_paths(view: SnapshotView, query: QueryContext) -> Ranking:
    ranked, explanation, paths = kept_per_query(
        view, "gram_paths", query, lambda: _search(view, query)
    )
    top = ranked[: query.k]
    return Ranking(top, explanation, _Restricted(paths, {s for s, _ in top}))


def link_graph_of(view: SnapshotView, query: QueryContext) -> LinkGraph:
    """GRAM's search graph for the query's fact coordinates, built once per view."""
    key = ("gram_link_graph", *query.fact_filter)
    if key not in view.cache:
        view.cache[key] = link_graph(passage_links(view), graph_of(view, query))
    return view.cache[key]


def _search(
    view: SnapshotView, query: QueryContext
) -> tuple[list[tuple[str, float]], dict[str, Any], Mapping[str, list[str]]]:
    """The blended ranking, the explanation and the paths behind each segment: all of
    `gram_paths` but the cut at k (kept per query by `kept_per_query`)."""
    graph = graph_of(view, query)
    links = passage_links(view)
    edges = link_graph_of(view, query)
    max_length = int(query.options.get("max_length", MAX_LENGTH))
    walk_length = min(WALK_LENGTH, max_length)
    prior = flat_prior(view, query)
    indptr = edges.entity_facts.indptr

    def linked(v: int) -> bool:
        """Whether vertex `v` has an edge (its degree read alone, not every vertex's)."""
        return bool(indptr[v + 1] > indptr[v])

    def vertices(entities: dict[str, float]) -> list[int]:
        nodes = (int(links.entity_node[e]) for e in positions(graph, entities))
        return [v for v in nodes if v >= 0 and linked(v)]

    named = vertices(named_entities(view, query.text))
    flat = vertices(prior.seed_entities(view, FLAT_ANCHORS))
    linkable = any(links.linkable[v] for v in named)
    titled = [] if linkable else [v for v in named_nodes(links, query.text) if linked(v)]
    count = int(query.options.get("seed_nodes", SEED_NODES))
    masses = dict(seed_nodes(view, links, prior))
    seeded = [v for v in list(masses)[:count] if linked(v)]
    anchors = list(dict.fromkeys([*named, *flat, *seeded, *titled]))
    entities_from = "named, flat ranking and named nodes"
    if not anchors:
        similar = similar_entities(
            view, query.text, FALLBACK_ANCHORS, probes=probes_of(query.options)
        )
        anchors = vertices(similar)
        entities_from = "similar"
        nodes = {int(links.entity_node[e]): w for e, w in positions(graph, similar).items()}
        masses = {v: w * float(links.specificity[v]) for v, w in nodes.items() if v >= 0}
    weights = [masses.get(a, 0.0) for a in anchors]
    trees = PathTrees(edges)  # the pair searches and the neighbourhoods share levels
    own = [i for i, a in enumerate(anchors) if a in named or a in titled]
    pairs = trees.among(
        anchors, max_length, EXPANSION_LIMIT, lambda i, j: _searched(i, j, weights, own)
    )
    walks = [
        trees.walk(a, walk_length, EXPANSION_LIMIT) if w > 0 else Search()
        for a, w in zip(anchors, weights, strict=True)
    ]
    ends = [(i, j) for i in range(len(anchors)) for j in range(i + 1, len(anchors))]
    credits = _Credits(graph, edges)
    for (i, j), search in zip(ends, pairs, strict=True):
        credits.add(search, weights[i], weights[j], every_segment=True)
    for weight, search in zip(weights, walks, strict=True):
        credits.add(search, weight, 0.0, every_segment=False)
    walked, paths, best = credits.ranked(view, links)
    ranked, shares = blended(view, query, prior, walked, "gram_paths")
    found = Counter[int]()
    for search in pairs:
        found.update(search.lengths())
    explanation = {
        "strategy": "gram_paths",
        "max_length": max_length,
        "walk_length": walk_length,
        "query_entities": [_name(links, graph, a) for a in anchors if a in named],
        "flat_entities": [_name(links, graph, a) for a in anchors if a in flat and a not in named],
        "seed_nodes": [_name(links, graph, a) for a in seeded],
        "named_nodes": [_name(links, graph, a) for a in anchors if a in titled],
        "flat": prior.summary(),
        "flat_share": shares,
        "entities_from": entities_from,
        "paths_found": {str(n): found[n] for n in range(1, max_length + 1)},
        "truncated": any(s.truncated for s in [*pairs, *walks]),
        "top_paths": [
            {"path": text, "score": round(score, 6)} for score, text in best[:TOP_PATHS_EXPLAINED]
        ],
    }
    return ranked, explanation, paths


def _searched(i: int, j: int, weights: list[float], own: list[int]) -> bool:
    """Whether the paths between anchors `i` and `j` are searched: GRAM's paths among the
    query's own entities (`own`: the positions of those it names, entities or topic and
    phrase nodes), so a pair with one of them where it names any, and any pair where it
    names none (the flat ranking's entities and seed nodes then stand in for them); never
    between two weightless anchors, whose paths would carry no mass."""
    if weights[i] + weights[j] <= 0:
        return False
    return not own or i in own or j in own


class _Credits:
    """The walk mass that paths bring to segments. A path from an anchor carries the
    anchor's weight times the walk's transition probability of each of its steps
    (`LinkGraph.steps`); a path joining two anchors carries the sum of that product from
    either end. A path from one anchor credits the segment it ends
    at (or the segments stating its last fact), a path joining two credits every segment
    it passes through and those stating its facts. Collected as arrays (`_collect`), path
    by path only for the paths shown."""

    def __init__(self, graph: MemoryGraph, edges: LinkGraph) -> None:
        self.graph, self.edges = graph, edges
        self.searches: list[Search] = []
        self.ends: list[tuple[float, float]] = []
        """Per search, the weights of the anchors its paths start and end at."""
        self.first: list[int] = [0]
        """Per search, the row of its first path among all the paths added (then their
        number)."""
        self.joined: list[bool] = []
        """Per search, whether it joined two anchors."""

    def add(self, search: Search, start: float, end: float, every_segment: bool) -> None:
        """Credit the paths of `search` (weights `start` and `end` at their ends; every
        segment on them, or the one at their end)."""
        if not search.groups:
            return
        self.searches.append(search)
        self.ends.append((start, end))
        self.first.append(self.first[-1] + len(search))
        self.joined.append(every_segment)

    def _collect(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every credit's segment and path row, and each path's mass (`Search.masses`):
        per search in order, per group of one length, its segment vertices (every column,
        or the last), then the segments stating its typed facts (every column, or the
        last), column by column, each column's paths in row order.

        Made for the groups of one length and kind of search at once (a query has ~90
        such chunks of ~40 credits, each a dozen array operations), every credit keyed by
        its chunk and column, and put in that order by one stable sort (the rows of one
        key are in order already): the same credits in the same order, the masses the
        same products."""
        edges, n = self.edges, self.edges.n_nodes
        classes: dict[tuple[int, bool], list[tuple[PathArrays, int, int, float, float]]] = {}
        chunk = 0
        for search, (start, end), row, joined in zip(
            self.searches, self.ends, self.first[:-1], self.joined, strict=True
        ):
            for group in search.groups:
                key = (group.facts.shape[1], joined)
                classes.setdefault(key, []).append((group, chunk, row, start, end))
                row += len(group)
                chunk += 1
        columns = max(steps for steps, _ in classes) + 2  # to key a credit by its column
        mass = np.zeros(self.first[-1])
        segments, paths, keys = [], [], []
        facts, fact_paths, fact_keys = [], [], []
        for (steps, joined), groups in classes.items():
            entities = np.concatenate([g.entities for g, *_ in groups])
            path_facts = np.concatenate([g.facts for g, *_ in groups])
            sizes = [len(g) for g, *_ in groups]
            rows = np.concatenate([np.arange(row, row + len(g)) for g, _, row, *_ in groups])
            chunks = np.repeat([c for _, c, *_ in groups], sizes)
            start = np.repeat([w for *_, w, _ in groups], sizes)
            end = np.repeat([w for *_, w in groups], sizes)
            mass[rows] = path_masses(entities, path_facts, edges.steps, start, end)
            m = len(rows)
            width = steps + 1 if joined else 1
            at = entities[:, -width:].T.ravel()  # column by column
            on = np.flatnonzero(at >= n)
            segments.append(at[on] - n)
            paths.append(rows[on % m])
            keys.append((chunks[on % m] * 2) * columns + on // m)
            width = steps if joined else 1
            stated = path_facts[:, -width:].T.ravel()
            typed = np.flatnonzero(edges.kind[stated] == FACT)
            facts.append(edges.ref[stated[typed]])
            fact_paths.append(rows[typed % m])
            fact_keys.append((chunks[typed % m] * 2 + 1) * columns + typed // m)
        # the segments stating the typed facts, read at once (`row_entries`)
        stating, _, counts = row_entries(self.graph.fact_segments, np.concatenate(facts))
        segments.append(np.asarray(stating, np.int64))
        paths.append(np.repeat(np.concatenate(fact_paths), counts))
        keys.append(np.repeat(np.concatenate(fact_keys), counts))
        order = np.argsort(np.concatenate(keys), kind="stable")
        return np.concatenate(segments)[order], np.concatenate(paths)[order], mass

    def ranked(
        self, view: SnapshotView, links: PassageLinks
    ) -> tuple[list[tuple[str, float]], Mapping[str, list[str]], list[tuple[float, str]]]:
        """The first `CANDIDATES` retrievable segments by summed mass (ties by position),
        scored by its log; the linearized paths of each one's `PATHS_PER_SEGMENT`
        heaviest credits; and, as (mass, linearized path), the `TOP_PATHS_EXPLAINED`
        heaviest paths joining two anchors (GRAM's search result), best first."""
        graph, edges = self.graph, self.edges
        if not self.searches:
            return [], {}, []
        segment, row, masses = self._collect()
        mass = masses[row]
        keep = view.retrievable_segments[segment] & (mass > 0)
        segment, mass, row = segment[keep], mass[keep], row[keep]
        if not len(segment):
            return [], {}, []
        distinct, inverse = np.unique(segment, return_inverse=True)
        total = np.bincount(inverse, weights=mass, minlength=len(distinct))  # as np.add.at
        order = np.lexsort((distinct, -total))[:CANDIDATES]
        scored = [
            (graph.segment_ids[segment], math.log(score))
            for segment, score in zip(distinct[order].tolist(), total[order].tolist(), strict=True)
        ]
        shown = order[:SEGMENTS_EXPLAINED]
        # the shown segments' heaviest credits: by segment, then mass descending
        showing = np.zeros(len(distinct), bool)
        showing[shown] = True
        of_shown = np.flatnonzero(showing[inverse])
        by = of_shown[np.lexsort((-mass[of_shown], inverse[of_shown]))]
        rank = np.arange(len(by)) - np.searchsorted(inverse[by], inverse[by], "left")
        heaviest: dict[int, list[int]] = {}
        for credit in by[rank < PATHS_PER_SEGMENT].tolist():
            heaviest.setdefault(int(inverse[credit]), []).append(credit)

        first = np.asarray(self.first)
        search = np.searchsorted(first, row, "right") - 1
        local = row - first[search]

        made: dict[int, str] = {}
        """Per path row, the text of the path in reading order (a path joining two
        anchors credits every segment on it, so it is shown with several, and it may be
        among the top paths too)."""

        def path_text(credit: int) -> str:
            key = int(row[credit])
            if key not in made:
                found = self.searches[int(search[credit])].path(int(local[credit]))
                made[key] = _path_text(view, graph, links, edges, reading_order(edges, found))
            return made[key]

        def texts_of(credits: list[int]) -> list[str]:
            return list(dict.fromkeys(path_text(c) for c in credits))

        texts = _ShownTexts(
            {graph.segment_ids[int(distinct[o])]: heaviest[o] for o in shown.tolist()}, texts_of
        )
        joined = np.flatnonzero(np.asarray(self.joined)[search])
        seen: dict[int, tuple[float, str]] = {}
        for credit in _heaviest_first(joined, mass, row, TOP_PATHS_EXPLAINED):
            seen[int(row[credit])] = (float(mass[credit]), path_text(credit))
        return scored, texts, list(seen.values())


class _ShownTexts(Mapping[str, list[str]]):
    """Per shown segment id, the texts of its heaviest credits' paths, linearized when
    first read: a query's top k reads those of a few of the `SEGMENTS_EXPLAINED` shown
    segments (the rest of the blended top k comes from the flat ranking)."""

    def __init__(self, credits: dict[str, list[int]], texts: Callable[[list[int]], list[str]]):
        self.credits, self.texts = credits, texts
        self.made: dict[str, list[str]] = {}

    def __getitem__(self, segment_id: str) -> list[str]:
        if segment_id not in self.made:
            self.made[segment_id] = self.texts(self.credits[segment_id])
        return self.made[segment_id]

    def __contains__(self, segment_id: object) -> bool:
        return segment_id in self.credits

    def __iter__(self) -> Iterator[str]:
        return iter(self.credits)

    def __len__(self) -> int:
        return len(self.credits)


class _Restricted(Mapping[str, list[str]]):
    """`paths` of the segments `kept` only, each read when asked: `Memory.query` reads the
    paths of the first k hits alone, and a widened ask ranks twice as many segments, whose
    texts `_ShownTexts` would otherwise linearize all."""

    def __init__(self, paths: Mapping[str, list[str]], kept: set[str]) -> None:
        self.paths, self.kept = paths, kept

    def __getitem__(self, segment_id: str) -> list[str]:
        if segment_id not in self.kept:
            raise KeyError(segment_id)
        return self.paths[segment_id]

    def __contains__(self, segment_id: object) -> bool:
        return segment_id in self.kept and segment_id in self.paths

    def __iter__(self) -> Iterator[str]:
        return (s for s in self.paths if s in self.kept)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _heaviest_first(
    credits: np.ndarray, mass: np.ndarray, path: np.ndarray, count: int
) -> list[int]:
    """Of `credits`, the first one of each of the `count` heaviest paths (`path` and
    `mass`: each credit's, the credits of one path sharing its mass), in the order of a
    stable sort of all `credits` by mass descending. That first credit is the path's earliest in
    `credits`, and the paths come by mass descending, then by that credit's place: one
    sort of the ~10^3-10^4 credits of joined paths a query has at 100k facts, where
    walking the sorted credits until `count` paths were seen took ~3x as long."""
    _, first = np.unique(path[credits], return_index=True)
    order = np.lexsort((first, -mass[credits[first]]))[:count]
    return credits[first[order]].tolist()


def _name(links: PassageLinks, graph: MemoryGraph, vertex: int) -> str:
    return links.name(vertex, graph.entity_names)


def _path_text(
    view: SnapshotView,
    graph: MemoryGraph,
    links: PassageLinks,
    edges: LinkGraph,
    path: RelationalPath,
) -> str:
    """A path linearized edge by edge: a fact as stored (`[s] -[p]-> [o]`), an untyped
    edge `[a] -[mentioned_in|next_turn]-> [b]` with a segment shown by its id."""

    def vertex(v: int) -> str:
        segment = edges.segment(v)
        return graph.segment_ids[segment] if segment >= 0 else _name(links, graph, v)

    parts = []
    for a, edge in zip(path.entities, path.facts, strict=False):
        if edges.kind[edge] == FACT:
            parts.append(graph.linearized(int(edges.ref[edge])))
        else:
            b = int(edges.fact_tail[edge] if edges.fact_head[edge] == a else edges.fact_head[edge])
            parts.append(f"[{vertex(a)}] -[{KIND_NAMES[edges.kind[edge]]}]-> [{vertex(b)}]")
    return " ; ".join(parts)
