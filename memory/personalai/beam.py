"""PersonalAI's BeamSearch retriever: from each linked query node, up to `max_paths` paths
grown step by step, keeping the most relevant to the question at every step.

Each step's candidate extensions are generated and ranked as arrays (`_candidates`: the
beams' hyperedges and their members gathered at once) and taken by array passes
(`_choose`); only the candidates taken become path objects.

Paper (§3, App. F): paths are built as in beam-search decoding; `max_depth = 5`,
`max_paths = 10`; same-path node revisits, node sharing between different paths and
relation sharing between different paths are all disallowed by default
(`same_path_intersection_by_node`, `diff_paths_intersection_by_node`,
`diff_paths_intersection_by_rel` = False); `mean_alpha = 0.75`; paths that stopped before
the depth limit are `ended`, those that reached it `continuous`, and
`final_sorting_mode = mixed` sorts both together by relevance and keeps `max_paths`
(`ended_first` / `continuous_first` fill from one list, then the other).

Choices where the paper is silent:
- A step crosses one hyperedge to another of its member nodes; its score is the cosine of
  the hyperedge's text (fact statement, thesis, segment) to the question.
- Relevance of a path with step scores s_1..s_n is
  mean_alpha * mean(s_1..s_n) + (1 - mean_alpha) * s_n: the path's average relevance,
  with a quarter of the weight on where it now stands.
- The beam width is `max_paths`. At each step all admissible extensions of all beams are
  ranked by relevance and taken greedily while they respect the intersection rules against
  the paths already taken (the start node is shared by construction). A beam none of whose
  extensions is taken has ended.
- Several linked nodes: one search from each, their paths united.
- A retrieved hyperedge's chain is its path up to and including it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from memory.personalai.hypergraph import (
    EdgeSimilarity,
    Hypergraph,
    row_entries,
    score_hyperedges_of,
)
from memory.personalai.traversal import Step, Traversal

ALGORITHM = "beam_search"
SORTING_MODES = ("mixed", "ended_first", "continuous_first")
HEAD = 8
"""Candidates per beam slot sorted first (`_best_first`); the rest only if needed."""


@dataclass(frozen=True)
class BeamParams:
    """App. F defaults."""

    max_depth: int = 5
    max_paths: int = 10
    same_path_intersection_by_node: bool = False
    diff_paths_intersection_by_node: bool = False
    diff_paths_intersection_by_rel: bool = False
    mean_alpha: float = 0.75
    final_sorting_mode: str = "mixed"

    def __post_init__(self) -> None:
        if self.final_sorting_mode not in SORTING_MODES:
            raise ValueError(
                f"final_sorting_mode must be one of {SORTING_MODES}, "
                f"got {self.final_sorting_mode!r}"
            )


@dataclass(frozen=True)
class BeamPath:
    """A path from `start`: its steps and the question similarity of each step."""

    start: int
    steps: tuple[Step, ...] = ()
    scores: tuple[float, ...] = ()

    @property
    def nodes(self) -> tuple[int, ...]:
        return (self.start, *(s.target for s in self.steps))

    @property
    def last(self) -> int:
        return self.steps[-1].target if self.steps else self.start

    def relevance(self, alpha: float) -> float:
        if not self.scores:
            return 0.0
        return alpha * sum(self.scores) / len(self.scores) + (1 - alpha) * self.scores[-1]

    def extended(self, step: Step, score: float) -> BeamPath:
        return BeamPath(self.start, (*self.steps, step), (*self.scores, score))


def beam_paths(
    hypergraph: Hypergraph,
    start: int,
    similarity: np.ndarray | EdgeSimilarity,
    params: BeamParams = BeamParams(),
) -> list[tuple[BeamPath, bool]]:
    """The final (path, ended) list from `start`, best first."""
    beams, ended = [BeamPath(start)], []
    for _ in range(params.max_depth):
        parents, edges, targets, relevance = _candidates(hypergraph, beams, similarity, params)
        taken_nodes = {n for p in ended for n in p.nodes[1:]}
        taken_rels = {s.hyperedge for p in ended for s in p.steps}
        for order in _best_first(relevance, HEAD * params.max_paths):
            chosen = _choose(
                beams,
                parents[order],
                edges[order],
                targets[order],
                set(taken_nodes),
                set(taken_rels),
                params,
            )
            if len(chosen) == params.max_paths or len(order) == len(relevance):
                break
        selected, extended_parents = [], set()
        for at in order[chosen].tolist():
            parent = int(parents[at])
            step = Step(int(edges[at]), beams[parent].last, int(targets[at]))
            selected.append(beams[parent].extended(step, float(similarity[step.hyperedge])))
            extended_parents.add(parent)
        ended += [p for i, p in enumerate(beams) if i not in extended_parents and p.steps]
        beams = selected
        if not beams:
            break
    return _final(ended, beams, params)


def _best_first(relevance: np.ndarray, head: int) -> Iterator[np.ndarray]:
    """The candidates best first (the loop's stable sort): first only the head of that
    order, every candidate at least as relevant as the `head`-th best (a prefix of the
    full order, ties kept whole), then the whole order, which the selection reads only
    when the head did not fill the beams. A hub's beam step has tens of thousands of
    candidates; sorting them all took most of a step at a million facts."""
    if 0 < head < len(relevance):
        threshold = np.partition(-relevance, head - 1)[head - 1]
        at = np.flatnonzero(-relevance <= threshold)
        yield at[np.argsort(-relevance[at], kind="stable")]
    yield np.argsort(-relevance, kind="stable")


def _choose(
    beams: list[BeamPath],
    parents: np.ndarray,
    edges: np.ndarray,
    targets: np.ndarray,
    taken_nodes: set[int],
    taken_rels: set[int],
    params: BeamParams,
) -> list[int]:
    """Positions of the candidates (given best first) the greedy selection takes: each
    one whose extended path shares no node (beyond the start) and no hyperedge with the
    paths taken before it, unless the parameters allow sharing, up to `max_paths`.

    A candidate's path is its beam's path plus one step, so the test splits into one on
    the beam (its nodes and hyperedges, the same for all its candidates) and one on the
    step's target and hyperedge. The taken nodes and hyperedges are kept as masks, and
    the beams closed by them as a mask of beams, each updated by what a pick newly took;
    the next pick is the first candidate after the last whose target, hyperedge and beam
    are all free, found by reading the masks over blocks of candidates, growing, from
    there: a pick costs a look at the candidates up to it, not a pass over all the rest
    (a hub's beam has thousands), nor a path object per candidate looked at."""
    by_node = not params.diff_paths_intersection_by_node
    by_rel = not params.diff_paths_intersection_by_rel
    beam_nodes = [set(b.nodes[1:]) for b in beams]
    beam_rels = [{s.hyperedge for s in b.steps} for b in beams]
    node_taken = _mask(targets, taken_nodes)
    rel_taken = _mask(edges, taken_rels)
    beam_closed = np.zeros(len(beams), bool)

    def close_beams() -> None:
        """Close the open beams that hold a taken node or hyperedge."""
        for b in np.flatnonzero(~beam_closed).tolist():
            if (by_node and beam_nodes[b] & taken_nodes) or (by_rel and beam_rels[b] & taken_rels):
                beam_closed[b] = True

    def next_free(position: int) -> int | None:
        block = 64
        while position < len(parents):
            end = min(position + block, len(parents))
            free = ~beam_closed[parents[position:end]]
            if by_node:
                free &= ~node_taken[targets[position:end]]
            if by_rel:
                free &= ~rel_taken[edges[position:end]]
            found = np.flatnonzero(free)
            if len(found):
                return position + int(found[0])
            position, block = end, block * 4
        return None

    close_beams()
    chosen: list[int] = []
    position = 0
    while len(chosen) < params.max_paths:
        at = next_free(position)
        if at is None:
            break
        chosen.append(at)
        beam = int(parents[at])
        nodes = (beam_nodes[beam] | {int(targets[at])}) - taken_nodes
        rels = (beam_rels[beam] | {int(edges[at])}) - taken_rels
        taken_nodes |= nodes
        taken_rels |= rels
        _mark(node_taken, nodes)
        _mark(rel_taken, rels)
        position = at + 1
        close_beams()
    return chosen


def _mask(values: np.ndarray, taken: set[int]) -> np.ndarray:
    """A mask over 0..max(values) of the `taken` ones (larger taken values cannot match)."""
    mask = np.zeros(int(values.max(initial=-1)) + 1, bool)
    _mark(mask, taken)
    return mask


def _mark(mask: np.ndarray, taken: set[int]) -> None:
    inside = [value for value in taken if value < len(mask)]
    mask[inside] = True


def _candidates(
    hypergraph: Hypergraph,
    beams: list[BeamPath],
    similarity: np.ndarray | EdgeSimilarity,
    params: BeamParams,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every admissible one-step extension of the beams, as arrays in the order the beams,
    their last node's hyperedges and those hyperedges' members come: (parent beam,
    hyperedge, target node, relevance of the extended path). The relevance is computed in
    the same float operations as `BeamPath.relevance`, so ties and order are the same.
    `beams` is never empty (the search stops when no beam is left)."""
    lasts = np.array([path.last for path in beams], np.int64)
    score_hyperedges_of(similarity, lasts)
    beam_of, hyperedges = row_entries(hypergraph.incidence, lasts)
    at, target = row_entries(hypergraph.members, hyperedges)
    parent, edge = beam_of[at], hyperedges[at]
    keep = target != lasts[parent]
    if not params.same_path_intersection_by_node:
        depth = max(len(path.nodes) for path in beams)
        on_path = np.full((len(beams), depth), -1, np.int64)
        for b, path in enumerate(beams):
            on_path[b, : len(path.nodes)] = path.nodes
        keep &= ~(on_path[parent] == target[:, None]).any(axis=1)
    parent, edge, target = parent[keep], edge[keep], target[keep]
    score = similarity[edge].astype(np.float64)
    totals = np.array([sum(path.scores) for path in beams], np.float64)
    counts = np.array([len(path.scores) for path in beams], np.int64)
    alpha = params.mean_alpha
    relevance = alpha * (totals[parent] + score) / (counts[parent] + 1) + (1 - alpha) * score
    return parent, edge, target, relevance


def _final(
    ended: list[BeamPath], continuous: list[BeamPath], params: BeamParams
) -> list[tuple[BeamPath, bool]]:
    def ranked(paths: list[BeamPath], is_ended: bool) -> list[tuple[BeamPath, bool]]:
        return sorted(
            ((p, is_ended) for p in paths), key=lambda x: -x[0].relevance(params.mean_alpha)
        )

    if params.final_sorting_mode == "ended_first":
        order = ranked(ended, True) + ranked(continuous, False)
    elif params.final_sorting_mode == "continuous_first":
        order = ranked(continuous, False) + ranked(ended, True)
    else:
        order = ranked(ended, True) + ranked(continuous, False)
        order.sort(key=lambda x: -x[0].relevance(params.mean_alpha))
    return order[: params.max_paths]


def beam_search(
    hypergraph: Hypergraph,
    linked: Sequence[int],
    similarity: np.ndarray | EdgeSimilarity,
    params: BeamParams = BeamParams(),
    node_name: Callable[[int], Any] = int,
) -> Traversal:
    """BeamSearch from every node of `linked`; the hyperedges on the kept paths."""
    traversal = Traversal()
    shown = []
    for start in dict.fromkeys(linked):
        for path, is_ended in beam_paths(hypergraph, start, similarity, params):
            traversal.visited |= set(path.nodes)
            for depth, step in enumerate(path.steps, 1):
                traversal.retrieve(ALGORITHM, step.hyperedge, path.steps[:depth])
            shown.append(
                {
                    "nodes": [node_name(n) for n in path.nodes],
                    "relevance": round(path.relevance(params.mean_alpha), 4),
                    "ended": is_ended,
                }
            )
    traversal.details[ALGORITHM] = {**asdict(params), "paths": shown}
    return traversal
