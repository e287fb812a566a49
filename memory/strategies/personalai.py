"""PersonalAI retrieval strategies (`../shared/papers/personalai.md`): A*, WaterCircles,
BeamSearch and the three pairwise unions the paper evaluates (WC+BS, A*+BS, A*+WC).

Each strategy links the question to entity nodes (`memory.personalai.evidence`), runs its
traversal(s) over the PersonalAI hypergraph (`memory.personalai.hypergraph`, built once per
view and fact coordinates), unites the retrieved hyperedges of a hybrid (each hyperedge
once, so each segment once), keeps the top N by similarity to the question (the paper's
Triplets Filter) and ranks the segments those hyperedges stand on. Where the paper scores
with an LLM or an embedding, the question's MiniLM vector is compared with the hyperedges'
stored vectors (fact statements, segments) or the thesis text embedded once per view.

Options (all optional; defaults are the paper's App. F values or the choices documented
in the modules):
- `restriction`: None / "all" (default), "E" (no episodic hyperedges), "T" (no thesis
  hyperedges);
- `top_n` (30): hyperedges kept by the Triplets Filter;
- `aligned_entities` (2): extra entities linked by similarity to the whole question;
- `flat_seeds` (4): entities of the `hybrid` ranking's first segments (the episodes flat
  search found, by prior mass) linked beside the question's own; capped because A* runs
  between every pair of linked nodes (with every entity of ten MuSiQue passages, about
  100 seeds, a query took many seconds);
- `astar_<field>`, `wc_<field>`, `bs_<field>`: any field of `AStarParams`,
  `WaterCirclesParams`, `BeamParams` (e.g. `astar_max_passed_nodes`, `wc_max_depth`,
  `bs_max_paths`, `bs_final_sorting_mode`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import numpy as np

from memory.flat_prior import flat_prior, with_graph_bonus
from memory.linking import named_entities, positions
from memory.personalai.astar import AStarParams, astar
from memory.personalai.beam import BeamParams, beam_search
from memory.personalai.evidence import (
    ALIGNED_ENTITIES,
    TOP_N,
    filtered,
    linked_nodes,
    ranked_segments,
)
from memory.personalai.hypergraph import (
    KIND_NAMES,
    EdgeSimilarity,
    PersonalGraph,
    personal_graph_of,
)
from memory.personalai.traversal import Traversal
from memory.personalai.water_circles import WaterCirclesParams, water_circles
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking

P = TypeVar("P")
Similarity = np.ndarray | EdgeSimilarity
Runner = Callable[[PersonalGraph, list[int], Similarity, Mapping[str, Any]], Traversal]
MAX_VISITED_SHOWN = 50
FLAT_SEEDS = 4


def params_from(cls: type[P], prefix: str, options: Mapping[str, Any]) -> P:
    """`cls()` with every field overridden by option `<prefix>_<field>` when given."""
    given = {
        f.name: options[f"{prefix}_{f.name}"]
        for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        if f"{prefix}_{f.name}" in options
    }
    return cls(**given)


def _astar(
    personal: PersonalGraph, linked: list[int], _: Similarity, options: Mapping[str, Any]
) -> Traversal:
    params = params_from(AStarParams, "astar", options)
    return astar(personal.hypergraph, linked, params, _namer(personal))


def _water_circles(
    personal: PersonalGraph, linked: list[int], similarity: Similarity, options: Mapping[str, Any]
) -> Traversal:
    params = params_from(WaterCirclesParams, "wc", options)
    return water_circles(personal.hypergraph, linked, similarity, params, _namer(personal))


def _beam(
    personal: PersonalGraph, linked: list[int], similarity: Similarity, options: Mapping[str, Any]
) -> Traversal:
    params = params_from(BeamParams, "bs", options)
    return beam_search(personal.hypergraph, linked, similarity, params, _namer(personal))


def _namer(personal: PersonalGraph) -> Callable[[int], str]:
    return personal.graph.entity_names.__getitem__


def _retrieve(
    view: SnapshotView, query: QueryContext, name: str, runners: tuple[Runner, ...]
) -> Ranking:
    options = query.options
    personal = personal_graph_of(view, query, options.get("restriction"))
    hypergraph, names = personal.hypergraph, personal.graph.entity_names
    question = view.embed_query(query.text)
    similarity = EdgeSimilarity(hypergraph.vectors, question, personal.fact_blocks)
    prior = flat_prior(view, query)
    linked = linked_nodes(
        view, query, personal, question, int(options.get("aligned_entities", ALIGNED_ENTITIES))
    )
    episodes = prior.seed_entities(view, int(options.get("flat_seeds", FLAT_SEEDS)))
    for node, weight in positions(personal.graph, episodes).items():
        linked.setdefault(node, round(weight, 4))
    traversal = Traversal()
    for run in runners:
        traversal = traversal.merge(run(personal, list(linked), similarity, options))
    kept = filtered(traversal, similarity, int(options.get("top_n", TOP_N)))
    scored, paths = ranked_segments(personal, traversal, kept, similarity, question, query.k)
    scored = with_graph_bonus(prior, scored)[: query.k]
    visited = sorted(traversal.visited, key=lambda n: names[n])
    explanation = {
        "strategy": name,
        "restriction": options.get("restriction") or "all",
        "seeds": {names[n]: w for n, w in linked.items()},
        "flat": prior.summary(),
        "named_in_query": sorted(
            names[personal.graph.entity_position[e]] for e in named_entities(view, query.text)
        ),
        "hypergraph": {
            "nodes": hypergraph.n_nodes,
            **{
                f"{kind}_hyperedges": int((hypergraph.kinds == i).sum())
                for i, kind in enumerate(KIND_NAMES)
            },
        },
        "visited_nodes": [names[n] for n in visited[:MAX_VISITED_SHOWN]],
        "visited_node_count": len(visited),
        "retrieved_hyperedges": len(traversal.chains),
        "hyperedges": [
            {
                "hyperedge": personal.label(e),
                "kind": KIND_NAMES[int(hypergraph.kinds[e])],
                "score": round(float(similarity[e]), 4),
                "found_by": sorted(traversal.found_by[e]),
            }
            for e in kept
        ],
        "top_n": len(kept),
        "traversal": traversal.details,
    }
    return Ranking(scored, explanation, paths)


def personalai_astar(view: SnapshotView, query: QueryContext) -> Ranking:
    return _retrieve(view, query, "personalai_astar", (_astar,))


def personalai_water_circles(view: SnapshotView, query: QueryContext) -> Ranking:
    return _retrieve(view, query, "personalai_water_circles", (_water_circles,))


def personalai_beam(view: SnapshotView, query: QueryContext) -> Ranking:
    return _retrieve(view, query, "personalai_beam", (_beam,))


def personalai_wc_bs(view: SnapshotView, query: QueryContext) -> Ranking:
    return _retrieve(view, query, "personalai_wc_bs", (_water_circles, _beam))


def personalai_astar_bs(view: SnapshotView, query: QueryContext) -> Ranking:
    return _retrieve(view, query, "personalai_astar_bs", (_astar, _beam))


def personalai_astar_wc(view: SnapshotView, query: QueryContext) -> Ranking:
    return _retrieve(view, query, "personalai_astar_wc", (_astar, _water_circles))
