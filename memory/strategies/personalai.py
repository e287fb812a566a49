"""PersonalAI retrieval strategies (`../shared/papers/personalai.md`): A*, WaterCircles,
BeamSearch and the three pairwise unions the paper evaluates (WC+BS, A*+BS, A*+WC).

The graph (`memory.personalai.hypergraph`, built once per view and fact coordinates) is
the paper's hybrid graph made of LLM-free stand-ins (issue 35):
- object nodes: entities, and the passage graph's topic / title, phrase, document,
  session, speaker and day nodes (`memory.passage_graph`);
- thesis hyperedges: the typed facts (and the LLM stage's theses, where it ran);
- episodic hyperedges: every segment over every passage-graph node it links to, so a
  traversal reaches from a query node through one passage to the nodes it shares with
  another (the bridge of a two-hop question); nodes linked to more than
  `max_node_segments` segments (hubs: a speaker, a common phrase) join no episode.

Each strategy links the question to nodes (the paper's Query LLM Parser and Knowledge
Comparator, `memory.personalai.evidence`): the entities it names or resembles, the phrase
and topic nodes its n-grams equal (`query_phrases`, the most specific), and the nodes of
the passages flat search ranks first (`prior_nodes`, by prior mass x specificity: the
episodes flat search found). It runs its traversal(s) over the hypergraph, unites the
retrieved hyperedges of a hybrid (each hyperedge once), and scores every fragment it
reached by the paper's WaterCircles count k of linked nodes among the fragment's
members ("sorted in descending order of k"), ties by cosine to the question; on
documents (`WALKED_KINDS`) the fragments are also the episodes of the nodes it visited,
and each node counts with the mass the prior's top passages send through it
(`memory.personalai.evidence.walked`). Which fragments are scored is the algorithm's
own (A*'s shortest paths between linked nodes, the circles' rings, the beams' paths);
the Triplets Filter (top N by similarity to the question) picks the paths shown. That
ranking is blended with the flat `hybrid` prior (`memory.traversal.blended`) with the
flat share of `transforms.traversal_blend` (entry `personalai`, fitted per corpus kind on
the dev sets; the paper has no prior to blend with).

Options (all optional; defaults are the paper's App. F values or the choices documented
in the modules):
- `restriction`: None / "all" (default), "E" (no episodic hyperedges), "T" (no thesis
  hyperedges);
- `top_n` (30): hyperedges kept by the Triplets Filter (their paths are shown);
- `aligned_entities` (2): extra entities linked by similarity to the whole question;
- `query_phrases` (4): phrase and topic nodes linked from the question's n-grams;
- `prior_nodes` (8): nodes of the `hybrid` ranking's first segments linked beside the
  question's own; capped because A* runs between every pair of linked nodes;
- `max_node_segments` (32): the hub bound of the episodes;
- `flat_share`: the blend's flat share for every corpus kind;
- `astar_<field>`, `wc_<field>`, `bs_<field>`: any field of `AStarParams`,
  `WaterCirclesParams`, `BeamParams` (e.g. `astar_max_passed_nodes`, `wc_max_depth`,
  `bs_max_paths`, `bs_final_sorting_mode`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, TypeVar

import numpy as np

from memory.corpus_kinds import DEFAULT_KIND, corpus_kind
from memory.flat_prior import FlatPrior, flat_prior, kept_per_query
from memory.linking import named_entities
from memory.personalai.astar import AStarParams, astar
from memory.personalai.beam import BeamParams, beam_search
from memory.personalai.evidence import (
    ALIGNED_ENTITIES,
    PRIOR_NODES,
    QUERY_PHRASES,
    TOP_N,
    filtered,
    linked_nodes,
    phrase_nodes,
    prior_node_mass,
    prior_nodes,
    ranked_segments,
)
from memory.personalai.hypergraph import (
    KIND_NAMES,
    MAX_NODE_SEGMENTS,
    EdgeSimilarity,
    PersonalGraph,
    personal_graph_of,
)
from memory.personalai.traversal import Traversal
from memory.personalai.water_circles import WaterCirclesParams, water_circles
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking
from memory.traversal import blended

P = TypeVar("P")
Similarity = np.ndarray | EdgeSimilarity
Runner = Callable[[PersonalGraph, list[int], Similarity, Mapping[str, Any]], Traversal]
MAX_VISITED_SHOWN = 50
WALKED_KINDS = {"documents": True, "conversations": False}
"""Per corpus kind (of the question's best flat passage), whether fragments are scored by
the prior mass their nodes carry (`walked`) or by the plain count k. Documents: MuSiQue
dev R@5 (all 100 questions, flat share 0.2) 71.7-74.5 against 67.7-69.2 before. Turns:
on LoCoMo dev (all questions, flat share 0.3) the mass kept turn R@10 (72.4-72.7 against
72.1-73.0 with the count at 0.5) but lost turn R@5 (61.1-61.7 against 62.9-63.6) and
session-unit R@10 (93.2-93.5 against 93.8-94.1), so turns keep the count."""


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
    return personal.name


def _retrieve(
    view: SnapshotView, query: QueryContext, name: str, runners: tuple[Runner, ...]
) -> Ranking:
    """The traversal's segments blended with the flat prior and cut at k; the traversal
    is kept per query (`kept_per_query`) apart from the flat share, which only the blend
    reads."""
    prior = flat_prior(view, query)
    unblended = replace(
        query, options={k: v for k, v in query.options.items() if k != "flat_share"}
    )
    traversed, paths, explanation = kept_per_query(
        view, name, unblended, lambda: _traverse(view, query, name, runners, prior)
    )
    ranked, shares = blended(view, query, prior, traversed, name)
    top = [(segment, round(score, 6)) for segment, score in ranked[: query.k]]
    shown = {segment: paths[segment] for segment, _ in top if segment in paths}
    return Ranking(top, {**explanation, "flat_share": shares}, shown)


def _traverse(
    view: SnapshotView,
    query: QueryContext,
    name: str,
    runners: tuple[Runner, ...],
    prior: FlatPrior,
) -> tuple[list[tuple[str, float]], dict[str, list[str]], dict[str, Any]]:
    """The traversal's scored segments (best first), their paths and the explanation."""
    options = query.options
    personal = personal_graph_of(
        view,
        query,
        options.get("restriction"),
        int(options.get("max_node_segments", MAX_NODE_SEGMENTS)),
    )
    hypergraph = personal.hypergraph
    question = view.embed_query(query.text)
    similarity = EdgeSimilarity(hypergraph.vectors, question, personal.fact_blocks)
    linked = linked_nodes(
        view, query, personal, question, int(options.get("aligned_entities", ALIGNED_ENTITIES))
    )
    phrases = phrase_nodes(personal, query.text, int(options.get("query_phrases", QUERY_PHRASES)))
    node_mass = prior_node_mass(view, personal, prior)
    seeded = prior_nodes(node_mass, int(options.get("prior_nodes", PRIOR_NODES)))
    for node, weight in (*phrases.items(), *seeded.items()):
        linked.setdefault(node, round(weight, 4))
    traversal = Traversal()
    for run in runners:
        traversal = traversal.merge(run(personal, list(linked), similarity, options))
    kept = filtered(traversal, similarity, int(options.get("top_n", TOP_N)))
    walk = node_mass if WALKED_KINDS.get(_corpus_kind(view, prior)) else None
    scored, paths = ranked_segments(personal, traversal, kept, linked, walk, question)
    visited = np.fromiter(traversal.visited, np.int64, len(traversal.visited))
    explanation = {
        "strategy": name,
        "restriction": options.get("restriction") or "all",
        "seeds": {personal.name(n): w for n, w in linked.items()},
        "flat": prior.summary(),
        "named_in_query": sorted(
            personal.name(personal.graph.entity_position[e])
            for e in named_entities(view, query.text)
        ),
        "hypergraph": {
            "nodes": hypergraph.n_nodes,
            **{
                f"{kind}_hyperedges": count
                for kind, count in zip(KIND_NAMES, hypergraph.kind_counts, strict=True)
            },
        },
        "visited_nodes": personal.first_names(visited, MAX_VISITED_SHOWN),
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
    return scored, paths, explanation


def _corpus_kind(view: SnapshotView, prior: FlatPrior) -> str:
    """The corpus kind of the passage flat search ranks first (documents where none)."""
    top = prior.top_segments(1)
    return corpus_kind(view, top[0]) if top else DEFAULT_KIND


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
