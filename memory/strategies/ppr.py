"""HippoRAG 2's personalized PageRank over the passage graph (`hipporag_ppr`).

Graph: `memory.passage_graph` (segments; the entities they mention and their structural
nodes, weighted by specificity; facts between entities; turn – next turn).

Reset vector, following HippoRAG 2 (passages seeded from the retriever's scores, phrase
nodes from the query's links):
- passages: the flat `hybrid` ranking as a distribution (`memory.flat_prior`, softmax at
  temperature 0.5), with mass 1 - `QUERY_LINK_SHARE`;
- nodes: the entities the query names (aliases as normalised n-grams; option
  `query_links`="all" adds the ends of the 5 facts most similar to it, HippoRAG 2's
  query-to-triple linking, and the 3 entities whose description is closest, weight =
  cosine) and the phrase nodes its n-grams equal (`memory.linking.phrase_keys`), each
  times its specificity, with mass
  `QUERY_LINK_SHARE` (where the query links to nothing, the passages take it all).
Damping 0.5 as in HippoRAG. A segment's score is its PageRank mass blended with the flat
ranking: z(log mass) x (1 - flat share) + z(flat score) x flat share (per corpus kind,
pinned by the snapshot: `transforms.traversal_blend`), so a passage
that only the walk reaches (the second hop of a question, through the entity or title it
shares with the first) can rise, and one the walk leaves alone keeps its flat standing.

Chosen on the dev sets where HippoRAG is silent or differs (it seeds passages at weight
0.05 beside phrase nodes; with our sparse LLM-free graph, query-node seeds of a third of
the mass cost 5 points of MuSiQue recall@5, hence the small share). Options:
`damping`, `temperature`, `query_link_share`, `flat_share`, `walk_threshold` (the local
walk's push threshold, `memory.passage_graph.WALK_THRESHOLD`; 0 walks the whole graph by
power iteration).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from memory.corpus_kinds import weights_by_kind
from memory.flat_prior import TEMPERATURE, flat_prior, kept_per_query
from memory.graph import graph_of
from memory.linking import named_entities, phrase_keys, query_entities
from memory.passage_graph import PHRASE_PREFIX, WALK_THRESHOLD, PassageGraph, passage_graph
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking
from transforms.rank_fusion import fuse
from transforms.traversal_blend import flat_shares

DAMPING = 0.5
QUERY_LINK_SHARE = 0.0
QUERY_LINKS = "named"
CANDIDATES = 200
"""Segments by walk mass that are blended with the flat ranking."""


def ppr(view: SnapshotView, query: QueryContext) -> Ranking:
    blended, explanation = kept_per_query(view, "hipporag_ppr", query, lambda: _walk(view, query))
    return Ranking([(s, round(score, 6)) for s, score in blended[: query.k]], explanation)


def reset_entries(
    graph: PassageGraph, passages: dict[str, float], links: dict[str, float], link_share: float
) -> tuple[np.ndarray, np.ndarray]:
    """The walk's reset vector over [segments | nodes] as its non-zero entries (positions
    ascending, masses): the passages' prior mass times 1 - `link_share`, and
    `link_share` spread over the linked nodes by weight (all of it where the passages
    have none). The same numbers, entry by entry, as the vector over the whole graph
    that `_walk` filled before, without allocating and scanning one per query."""
    segment_mass = np.fromiter(passages.values(), np.float64, len(passages))
    positions = [graph.segment_position[s] for s in passages]
    masses = [segment_mass]
    if links:
        share = link_share if segment_mass.sum() > 0 else 1.0
        total = sum(links.values())
        masses = [segment_mass * (1.0 - share), [share * w / total for w in links.values()]]
        positions += [graph.n_segments + graph.node_position[e] for e in links]
    entries = np.asarray(positions, np.int64)
    values = np.concatenate([np.asarray(m, np.float64) for m in masses])
    order = np.argsort(entries)
    kept = order[values[order] != 0]
    return entries[kept], values[kept]


def _walk(
    view: SnapshotView, query: QueryContext
) -> tuple[list[tuple[str, float]], dict[str, Any]]:
    """The walk's blended ranking of every candidate and the explanation: all of `ppr`
    but the cut at k (kept per query by `kept_per_query`)."""
    options = query.options
    damping = float(options.get("damping", DAMPING))
    flat_share = flat_shares("hipporag_ppr", view.snapshot.retrieval, options)
    link_share = float(options.get("query_link_share", QUERY_LINK_SHARE))
    prior = flat_prior(view, query)
    graph = passage_graph(view, query)
    passages = prior.distribution(float(options.get("temperature", TEMPERATURE)))
    named = named_entities(view, query.text)
    linked = (
        named if options.get("query_links", QUERY_LINKS) == "named" else query_entities(view, query)
    )
    phrases = {
        node: 1.0
        for node in (f"{PHRASE_PREFIX}{key}" for key in phrase_keys(query.text))
        if node in graph.node_position
    }
    links = {
        e: w * graph.specificity[graph.node_position[e]]
        for e, w in {**linked, **phrases}.items()
        if e in graph.node_position
    }
    seeds, weights = reset_entries(graph, passages, links, link_share)
    if not len(seeds):
        return [], {"strategy": "hipporag_ppr", "seeds": {}}
    threshold = float(options.get("walk_threshold", WALK_THRESHOLD))
    reached, mass = graph.top_segments(seeds, weights, damping, CANDIDATES, threshold)
    logs = np.log(mass + 1e-12).tolist()
    walked = [(graph.segment_ids[i], m) for i, m in zip(reached.tolist(), logs, strict=True)]
    by_kind = {kind: {"walk": 1.0 - share, "flat": share} for kind, share in flat_share.items()}

    blended = fuse({"walk": walked, "flat": prior.fused}, weights_by_kind(view, by_kind))
    entities = graph_of(view, query)

    def name(entity: str) -> str:
        position = entities.entity_position.get(entity)
        return entity if position is None else entities.entity_names[position]

    return (
        blended,
        {
            "strategy": "hipporag_ppr",
            "damping": damping,
            "flat_share": flat_share,
            "flat": prior.summary(),
            "query_links": {
                name(e): round(w, 4) for e, w in sorted(links.items(), key=lambda x: -x[1])
            },
            "named_in_query": sorted(name(e) for e in named),
            "walk_top": {
                graph.segment_ids[i]: round(float(m), 6)
                for i, m in zip(reached[:5], mass, strict=False)
            },
        },
    )
