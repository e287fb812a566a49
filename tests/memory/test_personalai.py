"""PersonalAI retrieval: A*, WaterCircles and BeamSearch on small hand-built hypergraphs,
their unions, the LLM-thesis reader, and the six strategies on the sample snapshot."""

from __future__ import annotations

import functools
import json
import shutil
from datetime import UTC, datetime

import duckdb
import numpy as np
import pytest

from memory.personalai.astar import AStarParams, astar, shortest_path
from memory.personalai.beam import BeamParams, beam_paths, beam_search
from memory.personalai.evidence import FLOOR, phrase_nodes, ranked_segments
from memory.personalai.hypergraph import (
    EPISODE,
    FACT,
    MAX_NODE_SEGMENTS,
    Hypergraph,
    personal_graph_of,
)
from memory.personalai.theses import read_theses
from memory.personalai.traversal import Traversal
from memory.personalai.water_circles import WaterCirclesParams, water_circles
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.personalai import personalai_beam
from schemas.warehouse import DDL

STRATEGIES = (
    "personalai_astar",
    "personalai_water_circles",
    "personalai_beam",
    "personalai_wc_bs",
    "personalai_astar_bs",
    "personalai_astar_wc",
)
UNIONS = {"personalai_wc_bs", "personalai_astar_bs", "personalai_astar_wc"}
TWO_HOP = "Which city is Priya Natarajan's office in?"
ROTTERDAM = "Harborview Office is located in Rotterdam"


def _hypergraph(
    n_nodes: int,
    members: list[list[int]],
    kinds: list[int] | None = None,
    similarity: list[float] | None = None,
    node_vectors: np.ndarray | None = None,
) -> Hypergraph:
    """Hyperedge vectors are (s, sqrt(1 - s²)) so that their cosine to the question (1, 0)
    is the given similarity s."""
    s = np.asarray(similarity if similarity is not None else [0.5] * len(members))
    return Hypergraph.from_members(
        n_nodes,
        members,
        kinds=kinds or [FACT] * len(members),
        vectors=np.stack([s, np.sqrt(1 - s**2)], axis=1),
        node_vectors=node_vectors if node_vectors is not None else np.ones((n_nodes, 2)) / 2**0.5,
    )


def _chain_graph(length: int) -> Hypergraph:
    """Nodes 0..length joined in a line by facts i = (i, i+1)."""
    return _hypergraph(length + 1, [[i, i + 1] for i in range(length)])


# --- A* -------------------------------------------------------------------------------


def _misleading_heuristic() -> Hypergraph:
    """Long path 0-1-2-3-5 through nodes that look like the target; short path 0-4-5
    through a node that looks opposite; an episode also joins 0 and 4."""
    target_like, opposite = [1.0, 0.0], [-1.0, 0.0]
    vectors = np.array(
        [[0.0, 1.0], target_like, target_like, target_like, opposite, target_like, [0.0, 1.0]]
    )
    members = [[0, 1], [1, 2], [2, 3], [3, 5], [0, 4], [4, 5], [0, 4, 6]]
    kinds = [FACT] * 6 + [EPISODE]
    return _hypergraph(7, members, kinds, node_vectors=vectors)


def test_astar_finds_the_cheapest_path_despite_a_misleading_heuristic():
    graph = _misleading_heuristic()
    path, expanded, _ = shortest_path(graph, 0, 5)
    assert path == [0, 4, 5]
    assert expanded <= 6


def test_astar_retrieves_every_hyperedge_along_the_paths_only():
    traversal = astar(_misleading_heuristic(), [0, 5])
    assert set(traversal.chains) == {4, 5, 6}  # facts 0-4, 4-5 and the episode over 0, 4
    assert [step.hyperedge for step in traversal.chains[6]] == [4, 5]  # facts shown first
    (pair,) = traversal.details["astar"]["pairs"]
    assert pair["path"] == [0, 4, 5]


def test_astar_respects_its_expansion_and_depth_bounds():
    graph = _chain_graph(6)
    assert shortest_path(graph, 0, 6)[0] == list(range(7))
    assert shortest_path(graph, 0, 6, AStarParams(max_passed_nodes=3))[0] is None
    assert shortest_path(graph, 0, 6, AStarParams(max_depth=5))[0] is None
    assert not astar(graph, [0, 6], AStarParams(max_depth=5)).chains


# --- WaterCircles ---------------------------------------------------------------------


def test_water_circles_expand_in_rings_from_every_seed_and_stop_at_the_depth_bound():
    graph = _hypergraph(8, [[0, 1], [1, 2], [2, 3], [3, 4], [5, 6], [6, 7]])
    similarity = np.full(6, 0.5)
    one = water_circles(graph, [0, 5], similarity, WaterCirclesParams(max_depth=1))
    assert one.visited == {0, 1, 5, 6}
    two = water_circles(graph, [0, 5], similarity, WaterCirclesParams(max_depth=2))
    assert two.visited == {0, 1, 2, 5, 6, 7}
    assert two.details["water_circles"]["rings"] == 2
    assert set(two.chains) == {0, 1, 4, 5}  # never the hyperedges of ring 3
    assert [s.hyperedge for s in two.chains[1]] == [0, 1]  # the ring path from seed 0


def test_water_circles_put_the_triplets_where_circles_meet_first():
    graph = _chain_graph(4)  # seeds 0 and 4 meet at node 2 in the second ring
    similarity = np.full(4, 0.5)
    params = WaterCirclesParams(max_depth=2, chain_triplets_num=1, other_triplets_num=0)
    traversal = water_circles(graph, [0, 4], similarity, params)
    details = traversal.details["water_circles"]
    assert details["circles_meet_at"] == [2]
    assert details["primary"] == 1
    (fact,) = traversal.chains
    assert fact in {1, 2}  # a triplet reaching the meeting node
    apart = water_circles(graph, [0, 4], similarity, WaterCirclesParams(max_depth=1))
    assert apart.details["water_circles"]["circles_meet_at"] == []


def test_water_circles_keep_fragments_naming_other_query_entities():
    members = [[0, 1], [1, 2], [0, 4, 9], [1, 8], [1, 7]]
    graph = _hypergraph(10, members, [FACT, FACT, EPISODE, EPISODE, EPISODE])
    similarity = np.full(len(members), 0.5)
    strict = water_circles(graph, [0, 4], similarity, WaterCirclesParams(max_depth=2))
    assert 2 in strict.chains  # the episode naming both seeds (k = 1)
    assert not {3, 4} & set(strict.chains)  # no other query entity in them: filtered
    loose = water_circles(
        graph, [0, 4], similarity, WaterCirclesParams(max_depth=2, strict_filter=False)
    )
    assert {2, 3, 4} <= set(loose.chains)
    capped = water_circles(
        graph,
        [0, 4],
        similarity,
        WaterCirclesParams(max_depth=2, episodic_num=1, strict_filter=False),
    )
    assert {e for e in capped.chains if e >= 2} == {2}  # highest k first


# --- BeamSearch -----------------------------------------------------------------------


def test_beam_keeps_only_the_top_width():
    graph = _hypergraph(6, [[0, i] for i in range(1, 6)], similarity=[0.5, 0.9, 0.1, 0.7, 0.3])
    similarity = graph.vectors @ np.array([1.0, 0.0])
    traversal = beam_search(graph, [0], similarity, BeamParams(max_depth=1, max_paths=2))
    assert set(traversal.chains) == {1, 3}
    assert [p["relevance"] for p in traversal.details["beam_search"]["paths"]] == [0.9, 0.7]


def test_beam_paths_do_not_share_nodes_unless_allowed_and_use_mean_alpha():
    # 0-1 (0.9), 0-2 (0.8), 1-3 (0.9), 2-3 (0.95)
    graph = _hypergraph(4, [[0, 1], [0, 2], [1, 3], [2, 3]], similarity=[0.9, 0.8, 0.9, 0.95])
    similarity = graph.vectors @ np.array([1.0, 0.0])
    params = BeamParams(max_depth=2, max_paths=2)
    paths = beam_paths(graph, 0, similarity, params)
    assert [(p.nodes, ended) for p, ended in paths] == [((0, 1, 3), False), ((0, 2), True)]
    assert paths[0][0].relevance(0.75) == pytest.approx(0.9)
    shared = beam_paths(
        graph, 0, similarity, BeamParams(2, 2, diff_paths_intersection_by_node=True)
    )
    assert sorted(p.nodes for p, _ in shared) == [(0, 1, 3), (0, 2, 3)]
    assert shared[1][0].relevance(0.75) == pytest.approx(0.75 * 0.875 + 0.25 * 0.95)


# --- unions ---------------------------------------------------------------------------


def test_union_contains_both_traversals_once():
    graph = _misleading_heuristic()
    similarity = graph.vectors @ np.array([1.0, 0.0])
    a = astar(graph, [0, 5])
    b = beam_search(graph, [0], similarity, BeamParams(max_depth=1, max_paths=3))
    union = a.merge(b)
    assert set(a.chains) & set(b.chains)
    assert set(union.chains) == set(a.chains) | set(b.chains)
    assert set(union.chains) > set(a.chains)
    for hyperedge in set(a.chains) & set(b.chains):
        assert union.found_by[hyperedge] == {"astar", "beam_search"}
    assert union.visited == a.visited | b.visited


# --- LLM theses -----------------------------------------------------------------------


def _warehouse() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for statement in DDL:
        con.execute(statement)
    return con


def _add_thesis(con, triplet_id, segment_id, text, entities, prompt="personalai_theses/v1"):
    con.execute(
        "INSERT INTO llm_triplets (triplet_id, collection, segment_id, doc_id, output_kind, "
        "thesis, thesis_entities, prompt_version) VALUES (?, 'sample', ?, 'd', ?, ?, ?, ?)",
        [
            triplet_id,
            segment_id,
            "thesis" if prompt.startswith("personalai") else "atomic_fact",
            text,
            [
                {
                    "text": e,
                    "entity_type": None,
                    "char_start": 0,
                    "char_end": 1,
                    "match_kind": "exact",
                }
                for e in entities
            ],
            prompt,
        ],
    )


def test_read_theses_skips_quarantined_answers_and_other_prompts():
    con = _warehouse()
    _add_thesis(con, "t1", "s1", "Priya works at Harborview.", ["Priya", "Harborview"])
    _add_thesis(con, "t2", "s2", "Half-read answer.", ["Priya"])
    _add_thesis(con, "t3", "s3", "Not a thesis.", ["Priya"], prompt="real_atomic_facts/v1")
    con.execute(
        "INSERT INTO quarantine VALUES ('sample', 'llm_triplets', 'd', "
        "'s2/personalai_theses/v1', 'schema violation', '{}', ?)",
        [datetime.now(UTC)],
    )
    (thesis,) = read_theses(con, "sample")
    assert (thesis.triplet_id, thesis.segment_id) == ("t1", "s1")
    assert thesis.entity_texts == ("Priya", "Harborview")
    assert read_theses(con, "other") == []
    assert read_theses(duckdb.connect(), "sample") == []  # no LLM stage tables


# --- the sample snapshot --------------------------------------------------------------


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_returns_at_most_k_segments_with_an_explanation(graph_memory, strategy):
    result = graph_memory.query("Who leads the Firmware team?", strategy=strategy, k=3)
    ids = [h.segment_id for h in result]
    assert 0 < len(ids) <= 3 and len(set(ids)) == len(ids)
    explanation = result.explanation
    json.dumps(explanation)
    assert "Firmware" in explanation["seeds"]
    assert explanation["visited_nodes"] and explanation["hyperedges"]
    assert all(h["score"] >= -1 and h["found_by"] for h in explanation["hyperedges"])
    algorithms = {a for h in explanation["hyperedges"] for a in h["found_by"]}
    assert algorithms <= set(explanation["traversal"])
    assert len(explanation["traversal"]) == (2 if strategy in UNIONS else 1)


@pytest.mark.parametrize("strategy", ["personalai_astar", "personalai_water_circles"])
def test_two_hops_from_person_to_office_city(graph_memory, strategy):
    result = graph_memory.query(TWO_HOP, strategy=strategy, k=5)
    assert "Priya Natarajan" in result.explanation["named_in_query"]
    rotterdam = [h for h in result if ROTTERDAM in h.text]
    assert rotterdam, [h.text[:60] for h in result]
    assert any("Rotterdam" in path for hit in rotterdam for path in hit.paths)


def test_restrictions_bar_hyperedge_kinds(graph_memory):
    view = graph_memory._view
    query = QueryContext(TWO_HOP, 5)
    full = personal_graph_of(view, query)
    assert full.hypergraph.n_hyperedges == len(full.graph.facts) + len(full.graph.segment_ids)
    result = graph_memory.query(TWO_HOP, strategy="personalai_beam", options={"restriction": "E"})
    assert result.explanation["restriction"] == "E"
    assert {h["kind"] for h in result.explanation["hyperedges"]} == {"fact"}
    with pytest.raises(ValueError, match="restriction"):
        graph_memory.query(TWO_HOP, strategy="personalai_beam", options={"restriction": "O"})


def test_episodes_join_topic_phrase_and_structural_nodes_but_no_hubs(graph_memory):
    view = graph_memory._view
    query = QueryContext(TWO_HOP, 5)
    personal = personal_graph_of(view, query)
    counts = np.asarray(view.graph_index.segment_nodes.sum(axis=0)).ravel()
    kinds = {
        personal.name(n).split(":")[0]
        for n in range(personal.graph.n_entities, personal.hypergraph.n_nodes)
        if personal.hypergraph.hyperedges_of(n).size
    }
    assert {"topic", "phrase", "document"} <= kinds
    first_episode = personal.hypergraph.n_hyperedges - len(personal.graph.segment_ids)
    for segment in range(len(personal.graph.segment_ids)):
        members = set(personal.hypergraph.members_of(first_episode + segment).tolist())
        linked = view.graph_index.segment_nodes[segment].indices
        expected = {
            int(personal.node_of_passage[p]) for p in linked if counts[p] <= MAX_NODE_SEGMENTS
        }
        assert members == expected
    # a tighter hub bound drops the nodes linked to more segments from every episode
    tight = personal_graph_of(view, query, max_node_segments=2)
    hubs = [int(tight.node_of_passage[p]) for p in np.flatnonzero(counts > 2)]
    assert hubs
    for hub in hubs:
        assert (tight.hypergraph.hyperedges_of(hub) < first_episode).all()  # facts only


def test_names_of_names_every_node_as_name_does(graph_memory):
    """The batch of names the explanation reads (entities, and the passage nodes' ids in
    one take) is `name` of each node, in the order asked, repeats included."""
    personal = personal_graph_of(graph_memory._view, QueryContext(TWO_HOP, 5))
    n_nodes, n_entities = personal.hypergraph.n_nodes, personal.graph.n_entities
    nodes = np.r_[np.arange(n_nodes)[::-1], n_entities, 0, n_nodes - 1]
    assert personal.names_of(nodes) == [personal.name(int(n)) for n in nodes]
    assert personal.names_of(np.zeros(0, np.int64)) == []
    assert n_nodes > n_entities  # passage nodes are named too


def test_query_links_phrase_and_topic_nodes_and_the_prior_passages_nodes(graph_memory):
    query = "Which city is the Harborview Office in?"
    result = graph_memory.query(query, strategy="personalai_water_circles", k=5)
    seeds = result.explanation["seeds"]
    assert any(name.startswith(("phrase:", "topic:")) for name in seeds), seeds
    view = graph_memory._view
    personal = personal_graph_of(view, QueryContext(query, 5))
    found = phrase_nodes(personal, "the Harborview Office", limit=10)
    assert found and all(personal.name(n).startswith(("phrase:", "topic:")) for n in found)
    assert list(found.values()) == sorted(found.values(), reverse=True)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_traversal_blends_with_the_prior_by_its_flat_share(graph_memory, strategy):
    flat = graph_memory.query(TWO_HOP, strategy="hybrid", k=5)
    kept = graph_memory.query(TWO_HOP, strategy=strategy, k=5, options={"flat_share": 1.0})
    assert [h.segment_id for h in kept] == [h.segment_id for h in flat]
    walked = graph_memory.query(TWO_HOP, strategy=strategy, k=5, options={"flat_share": 0.0})
    assert walked.explanation["flat_share"] == {"documents": 0.0, "conversations": 0.0}
    assert [h.segment_id for h in walked] != [h.segment_id for h in flat]


def test_llm_theses_become_hyperedges(graph_build, graph_memory, tmp_path):
    view = graph_memory._view
    segment = next(r for r in view.segments.to_pylist() if "Priya Natarajan works at" in r["text"])
    copy = tmp_path / "warehouse.duckdb"
    shutil.copy(graph_build.root / "warehouse.duckdb", copy)
    con = duckdb.connect(str(copy))
    text = "Priya Natarajan has her desk at the Harborview Office."
    _add_thesis(con, "t1", segment["segment_id"], text, ["Priya Natarajan", "Harborview Office"])
    _add_thesis(con, "t2", "no-such-segment", "Dropped.", ["Priya Natarajan"])
    _add_thesis(con, "t3", segment["segment_id"], "Unresolved.", ["Nobody At All"])
    con.close()
    thesis_view = SnapshotView(
        view.snapshot, functools.partial(duckdb.connect, str(copy), read_only=True), view.db
    )
    query = QueryContext("Where does Priya Natarajan have her desk?", 3)
    personal = personal_graph_of(thesis_view, query)
    (thesis,) = np.flatnonzero(personal.hypergraph.kinds == 1)
    members = {personal.graph.entity_names[n] for n in personal.hypergraph.members_of(thesis)}
    assert members == {"Priya Natarajan", "Harborview Office"}
    ranking = personalai_beam(thesis_view, query)
    assert ranking.explanation["hypergraph"]["thesis_hyperedges"] == 1
    shown = [h for h in ranking.explanation["hyperedges"] if h["kind"] == "thesis"]
    assert shown and text in shown[0]["hyperedge"]
    assert segment["segment_id"] in [s for s, _ in ranking.scored]
    con.close()


def test_fragments_are_the_visited_nodes_episodes_weighted_by_the_mass_they_carry(graph_memory):
    view = graph_memory._view
    query = QueryContext(TWO_HOP, 5)
    personal = personal_graph_of(view, query)
    hypergraph, spec = personal.hypergraph, personal.node_specificity
    first = hypergraph.n_hyperedges - len(personal.graph.segment_ids)
    in_episodes = [
        n for n in range(hypergraph.n_nodes) if (hypergraph.hyperedges_of(n) >= first).any()
    ]
    specific = max(in_episodes, key=lambda n: (spec[n], -n))
    common = min(in_episodes, key=lambda n: (spec[n], n))
    assert spec[specific] > spec[common]
    unvisited = next(n for n in in_episodes if n not in (specific, common))
    mass = (np.array(sorted([specific, common, unvisited])), np.ones(3))
    traversal = Traversal(visited={specific, common})  # nothing retrieved
    question = view.embed_query(TWO_HOP)
    scored, _ = ranked_segments(personal, traversal, [], {}, mass, question)
    ids = personal.graph.segment_ids

    def segments_of(node: int) -> set[str]:
        return {ids[e - first] for e in hypergraph.hyperedges_of(node).tolist() if e >= first}

    only_unvisited = segments_of(unvisited) - segments_of(specific) - segments_of(common)
    assert {s for s, _ in scored} == segments_of(specific) | segments_of(common)
    assert not only_unvisited & {s for s, _ in scored}
    score = dict(scored)
    for segment in segments_of(specific) - segments_of(common):
        for other in segments_of(common) - segments_of(specific):
            assert score[segment] > score[other]  # a node of fewer passages carries more
    best = scored[0][0]
    carried = spec[specific] * (best in segments_of(specific))
    carried += spec[common] * (best in segments_of(common))
    assert scored[0][1] == pytest.approx(np.log(carried + FLOOR), abs=1e-5)
    # without the mass (conversations), only what a retrieved hyperedge stands on, by count
    assert ranked_segments(personal, traversal, [], {}, None, question) == ([], {})
