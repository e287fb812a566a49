"""GRAM relational paths: bounded bidirectional path enumeration on a hand-built graph (all
simple paths ≤ L, none longer, no cycles, both edge directions), and the `gram_paths`
strategy and its CLI output on the sample snapshot."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from kgmem.cli import main
from memory.graph import MemoryGraph
from memory.relational_paths import (
    RelationalPath,
    paths_between,
    paths_from,
    reading_order,
)
from memory.strategies.gram_paths import TOP_PATHS_EXPLAINED, _searched

# A(0) -r0-> B(1) -r1-> C(2) <-r2- D(3);  A -r3-> D;  B -r4-> D;  C -r5-> E(4);
# E -r6-> A (closes cycles through A);  F(5) isolated but for a self-loop fact r7.
NAMES = ["A", "B", "C", "D", "E", "F"]
TRIPLES = [(0, 1), (1, 2), (3, 2), (0, 3), (1, 3), (2, 4), (4, 0), (5, 5)]


def _graph(triples: list[tuple[int, int]] = TRIPLES, names: list[str] = NAMES) -> MemoryGraph:
    n_e, n_f = len(names), len(triples)
    head = np.array([h for h, _ in triples], dtype=np.int64)
    tail = np.array([t for _, t in triples], dtype=np.int64)
    index = np.arange(n_f)
    entity_facts = sp.coo_matrix(
        (
            np.concatenate([np.ones(n_f), -np.ones(n_f)]),
            (np.concatenate([head, tail]), np.concatenate([index, index])),
        ),
        shape=(n_e, n_f),
    ).tocsr()
    facts = [
        {"head_name": names[h], "relation": f"r{i}", "tail_name": names[t]}
        for i, (h, t) in enumerate(triples)
    ]
    return MemoryGraph(
        entity_ids=[f"e{i}" for i in range(n_e)],
        entity_names=names,
        segment_ids=[],
        facts=facts,
        fact_head=head,
        fact_tail=tail,
        fact_confidence=np.ones(n_f),
        fact_vectors=np.zeros((n_f, 2), dtype=np.float32),
        entity_facts=entity_facts,
        mentions=sp.csr_matrix((0, n_e)),
        fact_segments=sp.csr_matrix((n_f, 0)),
    )


def _brute_force(
    triples: list[tuple[int, int]], source: int, target: int | None, max_length: int
) -> set[tuple[int, ...]]:
    """Every fact sequence forming a simple undirected walk from source (to target)."""
    found = set()
    for n in range(1, max_length + 1):
        for facts in itertools.product(range(len(triples)), repeat=n):
            walk, ok = [source], True
            for f in facts:
                h, t = triples[f]
                if walk[-1] not in (h, t) or h == t:
                    ok = False
                    break
                walk.append(t if walk[-1] == h else h)
            if ok and len(set(walk)) == len(walk) and (target is None or walk[-1] == target):
                found.add(facts)
    return found


def _valid(graph: MemoryGraph, path: RelationalPath) -> bool:
    if len(set(path.entities)) != len(path.entities):
        return False
    return all(
        {int(graph.fact_head[f]), int(graph.fact_tail[f])} == {a, b}
        for f, a, b in zip(path.facts, path.entities, path.entities[1:], strict=False)
    )


@pytest.mark.parametrize("max_length", [1, 2, 3, 4])
@pytest.mark.parametrize("pair", [(0, 2), (2, 0), (0, 4), (1, 4), (3, 4), (0, 5)])
def test_paths_between_are_exactly_the_simple_paths_up_to_l(pair, max_length):
    graph = _graph()
    search = paths_between(graph, *pair, max_length, limit=10_000)
    got = [p.facts for p in search.paths]
    assert len(got) == len(set(got)), "each path once"
    assert set(got) == _brute_force(TRIPLES, *pair, max_length)
    assert all(len(p) <= max_length and _valid(graph, p) for p in search.paths)
    assert all(p.entities[0] == pair[0] and p.entities[-1] == pair[1] for p in search.paths)
    assert [len(p) for p in search.paths] == sorted(len(p) for p in search.paths)
    assert not search.truncated


def test_paths_follow_edges_against_their_direction():
    graph = _graph()
    # B -> C <- D: only reachable by walking r2 backwards from C to D.
    paths = {p.facts for p in paths_between(graph, 1, 3, 2, limit=100).paths}
    assert paths == {(4,), (1, 2), (0, 3)}
    # A(0) to E(4) in one step only along r6 = E -> A, i.e. against its direction.
    assert {p.facts for p in paths_between(graph, 0, 4, 1, limit=100).paths} == {(6,)}


def test_paths_from_one_entity_are_all_simple_paths_up_to_l_without_cycles():
    graph = _graph()
    for max_length in (1, 2, 3):
        search = paths_from(graph, 0, max_length, limit=10_000)
        assert {p.facts for p in search.paths} == _brute_force(TRIPLES, 0, None, max_length)
        assert all(p.entities[0] == 0 and _valid(graph, p) for p in search.paths)
    assert paths_from(graph, 5, 3, limit=100).paths == [], "a self-loop is no path"


def test_expansion_limit_truncates_and_reports_it():
    graph = _graph()
    full = paths_from(graph, 0, 3, limit=10_000)
    cut = paths_from(graph, 0, 3, limit=4)
    assert cut.truncated and not full.truncated
    assert 0 < len(cut.paths) < len(full.paths)
    assert {len(p) for p in cut.paths} == {1}, "the deepest level is the one cut short"


def test_reading_order_and_linearization():
    graph = _graph()
    path = RelationalPath((2, 1, 0), (1, 0))  # C <-r1- B <-r0- A, found from C
    readable = reading_order(graph, path)
    assert readable.entities == (0, 1, 2)
    assert graph.path_text(list(readable.facts)) == "[A] -[r0]-> [B] ; [B] -[r1]-> [C]"
    mixed = RelationalPath((1, 2, 3), (1, 2))  # B -r1-> C <-r2- D: a tie keeps it
    assert reading_order(graph, mixed) == mixed


def test_office_city_path_between_query_entities(graph_memory):
    result = graph_memory.query(
        "Is Priya Natarajan's office in Rotterdam?", strategy="gram_paths", k=5
    )
    explanation = result.explanation
    assert {"Priya Natarajan", "Rotterdam"} <= set(explanation["query_entities"])
    assert explanation["paths_found"]["2"] >= 1
    texts = {h.text: h for h in result}
    works = [h for t, h in texts.items() if "Priya Natarajan works at the Harborview Office" in t]
    located = [h for t, h in texts.items() if "Harborview Office is located in Rotterdam" in t]
    assert works and located, "both supporting segments are retrieved"
    assert works[0].paths and located[0].paths
    scores = [h.score for h in result]
    assert scores == sorted(scores, reverse=True)


def test_paths_start_and_end_at_anchors(graph_memory):
    """The anchors are the named entities, the flat ranking's seed entities and seed
    nodes; every kept path joins two of them (or starts at one), within L edges."""
    result = graph_memory.query("Tell me about the Harborview Office", strategy="gram_paths", k=5)
    explanation = result.explanation
    assert "Harborview Office" in explanation["query_entities"]
    assert explanation["seed_nodes"], "the prior's top segments seed passage nodes"
    anchors = {
        *explanation["query_entities"],
        *explanation["flat_entities"],
        *explanation["seed_nodes"],
    }
    assert any(h.paths for h in result)
    for path in explanation["top_paths"]:
        text = path["path"]
        assert text.startswith(tuple(f"[{name}]" for name in anchors)) or any(
            text.endswith(f"[{name}]") for name in anchors
        )
    assert 1 <= len(explanation["top_paths"]) <= TOP_PATHS_EXPLAINED
    walked = [p for h in result for p in h.paths if p.count(" ; ") == 2]
    assert walked, "a seed node's neighbourhood: node - segment - node - segment"
    assert set(explanation["paths_found"]) == {"1", "2", "3", "4"}
    short = graph_memory.query(
        "Tell me about the Harborview Office",
        strategy="gram_paths",
        options={"max_length": 1},
    )
    assert set(short.explanation["paths_found"]) == {"1"}
    assert all(" ; " not in p["path"] for p in short.explanation["top_paths"])


def test_cli_explain_prints_paths(graph_build, capsys):
    code = main(
        [
            "query",
            "Is Priya Natarajan's office in Rotterdam?",
            "--strategy",
            "gram_paths",
            "--explain",
            "--home",
            str(graph_build.root),
        ]
    )
    printed = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert '"paths_found"' in printed, "the explanation is printed"
    assert '"top_paths": [ { "path": "[' in printed, "with its top paths"
    assert "path [" in printed and "-[mentioned_in]-> [" in printed, "and each hit its paths"


def test_untyped_links_join_the_paths_and_the_blend(graph_memory):
    """Paths run through the passage graph's untyped links (node – segment – node) as well
    as facts; the segments on them are blended with the flat ranking by the flat share:
    at 1 the ranking is `hybrid`'s, at 0 the best path's segment leads."""
    question = "Tell me about the Harborview Office"
    result = graph_memory.query(question, strategy="gram_paths", k=5)
    explanation = result.explanation
    untyped = [p for p in explanation["top_paths"] if "-[mentioned_in]->" in p["path"]]
    assert untyped, "a path through a segment's untyped link"
    assert any("-[mentioned_in]->" in path for hit in result for path in hit.paths)
    flat = graph_memory.query(question, strategy="hybrid", k=5)
    only_flat = graph_memory.query(
        question, strategy="gram_paths", k=5, options={"flat_share": 1.0}
    )
    assert [h.segment_id for h in only_flat] == [h.segment_id for h in flat]
    only_paths = graph_memory.query(
        question, strategy="gram_paths", k=5, options={"flat_share": 0.0}
    )
    assert only_paths.hits[0].paths, "the first hit is on a path"
    assert [h.segment_id for h in only_paths] != [h.segment_id for h in flat]


def test_link_graph_edges_of_a_toy_incidence():
    """Facts between named entities, non-hub node – segment mentions and next turns;
    a hub node (more than HUB_SEGMENTS segments) joins no mention."""
    from memory import passage_links as pl
    from memory.link_graph import FACT, MENTION, NEXT_TURN, link_graph

    n_segments = pl.HUB_SEGMENTS + 2
    # node 0: entity A in segments 0, 1; node 1: entity B in segment 1; node 2: a hub
    rows = [0, 1, 1, *range(n_segments)]
    cols = [0, 0, 1, *([2] * n_segments)]
    incidence = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n_segments, 3))
    following = np.full(n_segments, -1)
    following[0] = 1
    links = pl.PassageLinks(
        node_ids=["a", "b", "session:x"],
        node_position={"a": 0, "b": 1, "session:x": 2},
        segment_nodes=incidence,
        node_segments=incidence.T.tocsr(),
        counts=np.array([2, 1, n_segments]),
        entity_node=np.array([0, 1]),
        node_entity=np.array([0, 1, -1]),
        next_segment=following,
        previous_segment=np.array([-1, 0, *([-1] * (n_segments - 2))]),
        segment_vectors=np.zeros((n_segments, 0), np.float32),
    )
    edges = link_graph(links, _graph([(0, 1), (1, 1)], ["A", "B"]))
    ends = zip(edges.fact_head.tolist(), edges.fact_tail.tolist(), edges.kind.tolist(), strict=True)
    assert list(ends) == [
        (0, 1, FACT),
        (0, 3, MENTION),
        (0, 4, MENTION),
        (1, 4, MENTION),
        (3, 4, NEXT_TURN),
    ]
    assert edges.ref.tolist() == [0, -1, -1, -1, -1]
    between = paths_between(edges, 0, 1, 2, 100)
    assert {p.entities for p in between.paths} == {(0, 1), (0, 4, 1)}
    # walk weights: a fact conf x lesser specificity, a mention its node's specificity
    assert edges.weight.tolist() == pytest.approx([0.5, 0.5, 0.5, 1.0, 1.0])
    assert edges.degree[[0, 1, 3, 4]].tolist() == pytest.approx([1.5, 1.5, 1.5, 2.5])
    entities = [p.entities for p in between.paths]
    masses = dict(zip(entities, between.masses(edges.steps, 1.0), strict=True))
    assert masses[(0, 1)] == pytest.approx(0.5 / 1.5)
    assert masses[(0, 4, 1)] == pytest.approx(0.5 / 1.5 * 1.0 / 2.5)
    both = dict(zip(entities, between.masses(edges.steps, 1.0, 2.0), strict=True))
    assert both[(0, 4, 1)] == pytest.approx(0.5 / 1.5 / 2.5 + 2.0 * 1.0 / 1.5 * 0.5 / 2.5)


@pytest.mark.parametrize("seed", range(4))
def test_heaviest_first_is_the_full_sort_of_credits(seed: int) -> None:
    """The heaviest paths' first credits are what a stable sort of every credit by mass
    finds, a path's credits sharing its mass: ties between paths, and credits of one
    path spread over the list."""
    from memory.strategies.gram_paths import _heaviest_first

    rng = np.random.default_rng(seed)
    n = 1500
    search, row = rng.integers(0, 3, n), rng.integers(0, 50, n)
    path = search * 50 + row
    mass = rng.integers(0, 40, 150).astype(float)[path]  # many ties
    if seed % 2:  # one path holds most credits and is the heaviest
        path[: n // 2] = 7
        mass[path == 7] = 100.0
    credits = np.flatnonzero(rng.random(n) < 0.9)
    expected: dict[int, int] = {}
    for c in credits[np.argsort(-mass[credits], kind="stable")].tolist():
        expected.setdefault(int(path[c]), c)
    top = list(expected.values())[:TOP_PATHS_EXPLAINED]
    assert _heaviest_first(credits, mass, path, TOP_PATHS_EXPLAINED) == top


def test_pairs_searched_are_those_with_an_entity_the_query_names() -> None:
    """GRAM's paths among the query's entities: with anchors it names (positions 0 and
    3), a pair is searched only with one of them; naming none, every pair is; two
    weightless anchors never are."""
    weights = [0.0, 0.4, 0.2, 0.1, 0.0]
    pairs = list(itertools.combinations(range(len(weights)), 2))
    named = [p for p in pairs if _searched(*p, weights, [0, 3])]
    assert named == [(0, 1), (0, 2), (0, 3), (1, 3), (2, 3), (3, 4)]
    none_named = [p for p in pairs if _searched(*p, weights, [])]
    assert none_named == [p for p in pairs if p not in {(0, 4)}]
