"""Test oracle: PersonalAI BeamSearch as it was before its candidate steps were generated
and ranked as arrays (one `BeamPath` object per candidate), kept verbatim so the
differential test can check that `memory.personalai.beam` returns identical paths,
chains and details. Not product code."""

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
        candidates = [
            (path.extended(Step(e, path.last, int(v)), float(similarity[e])), parent)
            for parent, path in enumerate(beams)
            for e in hypergraph.hyperedges_of(path.last).tolist()
            for v in hypergraph.members_of(e)
            if v != path.last and (params.same_path_intersection_by_node or v not in path.nodes)
        ]
        candidates.sort(key=lambda c: -c[0].relevance(params.mean_alpha))
        taken_nodes = {n for p in ended for n in p.nodes[1:]}
        taken_rels = {s.hyperedge for p in ended for s in p.steps}
        selected, extended_parents = [], set()
        for path, parent in candidates:
            if len(selected) == params.max_paths:
                break
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
