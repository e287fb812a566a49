"""Test oracle: PersonalAI BeamSearch as it was before its candidate steps were generated
and ranked as arrays (one `BeamPath` object per candidate), its search loop kept
verbatim (the parameters, path type and final sort are the product's) so the
differential test can check that `memory.personalai.beam.beam_paths` returns identical
paths. Not product code."""

from __future__ import annotations

import numpy as np

from memory.personalai.beam import BeamParams, BeamPath, _final
from memory.personalai.hypergraph import Hypergraph
from memory.personalai.traversal import Step


def beam_paths(
    hypergraph: Hypergraph,
    start: int,
    similarity: np.ndarray,
    params: BeamParams,
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
