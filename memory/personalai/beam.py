"""PersonalAI's BeamSearch retriever: from each linked query node, up to `max_paths` paths
grown step by step, keeping the most relevant to the question at every step.

Each step's candidate extensions are generated and ranked as arrays (`_candidates`: a
row selection of the hypergraph's member matrix per beam); only the candidates the
greedy selection looks at become path objects.

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

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from memory.personalai.hypergraph import Hypergraph
from memory.personalai.traversal import Step, Traversal

ALGORITHM = "beam_search"
SORTING_MODES = ("mixed", "ended_first", "continuous_first")


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
    similarity: np.ndarray,
    params: BeamParams = BeamParams(),
) -> list[tuple[BeamPath, bool]]:
    """The final (path, ended) list from `start`, best first."""
    beams, ended = [BeamPath(start)], []
    for _ in range(params.max_depth):
        parents, edges, targets, relevance = _candidates(hypergraph, beams, similarity, params)
        order = np.argsort(-relevance, kind="stable")  # the loop's stable sort, best first
        taken_nodes = {n for p in ended for n in p.nodes[1:]}
        taken_rels = {s.hyperedge for p in ended for s in p.steps}
        selected, extended_parents = [], set()
        for at in order.tolist():
            if len(selected) == params.max_paths:
                break
            parent = int(parents[at])
            source = beams[parent].last
            step = Step(int(edges[at]), source, int(targets[at]))
            path = beams[parent].extended(step, float(similarity[step.hyperedge]))
            nodes, rels = set(path.nodes[1:]), {s.hyperedge for s in path.steps}
            if not params.diff_paths_intersection_by_node and nodes & taken_nodes:
                continue
            if not params.diff_paths_intersection_by_rel and rels & taken_rels:
                continue
            selected.append(path)
            extended_parents.add(parent)
            taken_nodes |= nodes
            taken_rels |= rels
        ended += [p for i, p in enumerate(beams) if i not in extended_parents and p.steps]
        beams = selected
        if not beams:
            break
    return _final(ended, beams, params)


def _candidates(
    hypergraph: Hypergraph, beams: list[BeamPath], similarity: np.ndarray, params: BeamParams
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every admissible one-step extension of the beams, as arrays in the order the beams,
    their last node's hyperedges and those hyperedges' members come: (parent beam,
    hyperedge, target node, relevance of the extended path). The relevance is computed in
    the same float operations as `BeamPath.relevance`, so ties and order are the same.
    `beams` is never empty (the search stops when no beam is left)."""
    parts: list[tuple[np.ndarray, ...]] = []
    alpha = params.mean_alpha
    for parent, path in enumerate(beams):
        hyperedges = hypergraph.hyperedges_of(path.last)
        members = hypergraph.members[hyperedges]
        edge = np.repeat(hyperedges, np.diff(members.indptr)).astype(np.int64)
        target = np.asarray(members.indices, np.int64)
        keep = target != path.last
        if not params.same_path_intersection_by_node:
            keep &= ~np.isin(target, path.nodes)
        edge, target = edge[keep], target[keep]
        score = np.asarray(similarity, np.float64)[edge]
        total = sum(path.scores) + score
        relevance = alpha * total / (len(path.scores) + 1) + (1 - alpha) * score
        parts.append((np.full(len(edge), parent, np.int64), edge, target, relevance))
    parents, edges, targets, relevance = (np.concatenate(c) for c in zip(*parts, strict=True))
    return parents, edges, targets, relevance


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
    similarity: np.ndarray,
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
