"""GRAM's path search on arrays (`memory.relational_paths`) against the edge-by-edge search
it replaced (`tests/memory/relational_paths_reference.py`): the same paths in the same
order, the same truncation, and the same walk masses, on random multigraphs with hubs,
parallel facts and self-loops, and on the sample snapshot's graph; and GRAM's link graph
(facts and untyped links) against its edge-by-edge build, with paths searched on it."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from memory import relational_paths as fast
from memory.graph import MemoryGraph, graph_of
from memory.link_graph import FACT, MENTION, link_graph
from memory.passage_graph import NEXT_TURN_WEIGHT, PHRASE_WEIGHT
from memory.passage_links import passage_links
from memory.snapshot_view import QueryContext
from tests.memory import relational_paths_reference as reference
from tests.memory.test_gram_paths import _graph


def _random_graph(seed: int, entities: int = 30, facts: int = 120) -> MemoryGraph:
    """Facts drawn with a skew towards low entity numbers (hubs), so some pairs are joined
    many times over and some searches hit their limit."""
    rng = np.random.default_rng(seed)
    ends = np.minimum(rng.geometric(0.12, size=(facts, 2)) - 1, entities - 1)
    triples = [(int(h), int(t)) for h, t in ends]
    return _graph(triples, [f"n{i}" for i in range(entities)])


def _same(got: fast.Search, want: reference.Search) -> None:
    assert got.paths == want.paths
    assert got.truncated == want.truncated
    assert len(got) == len(want.paths)
    assert [got.path(i) for i in range(len(got))] == want.paths


@pytest.mark.parametrize("seed", range(6))
def test_paths_match_the_edge_by_edge_search(seed: int) -> None:
    graph = _random_graph(seed)
    rng = np.random.default_rng(100 + seed)
    pairs = [tuple(int(e) for e in rng.choice(graph.n_entities, 2)) for _ in range(8)]
    for (source, target), max_length, limit in itertools.product(
        [*pairs, (0, 1), (0, 0)], [1, 2, 3, 4, 5], [3, 40, 400, 10_000]
    ):
        _same(
            fast.paths_between(graph, source, target, max_length, limit),
            reference.paths_between(graph, source, target, max_length, limit),
        )
    for source, max_length, limit in itertools.product([0, 1, 7, 29], [1, 2, 3], [1, 5, 300]):
        _same(
            fast.paths_from(graph, source, max_length, limit),
            reference.paths_from(graph, source, max_length, limit),
        )


@pytest.mark.parametrize("seed", range(3))
def test_paths_among_are_every_pair_searched_alone(seed: int) -> None:
    """Each entity's levels grown once and cut per pair give every pair's own search,
    truncations and the fallback past the limit included (hubs, a repeated entity). Three
    graphs and three limits: each pair's reference search is the slow edge-by-edge one."""
    graph = _random_graph(seed)
    rng = np.random.default_rng(200 + seed)
    entities = [0, 1, *(int(e) for e in rng.choice(graph.n_entities, 5)), 0]
    for max_length, limit in itertools.product([1, 2, 3, 5], [3, 40, 10_000]):
        among = fast.paths_among(graph, entities, max_length, limit)
        pairs = list(itertools.combinations(entities, 2))
        assert len(among) == len(pairs)
        for got, (source, target) in zip(among, pairs, strict=True):
            _same(got, reference.paths_between(graph, source, target, max_length, limit))


def test_paths_among_search_alone_where_a_shared_level_would_pass_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Entity 0's level 1 holds 3 paths (to 1, 2 and 3); searched backward from 0 avoiding
    1, it keeps 2, within a limit of 3, but the shared level 1 is past it: that side runs
    its own search, and answers as it would alone."""
    graph = _graph([(0, 1), (0, 2), (0, 3), (2, 4), (3, 4), (4, 1)], [f"n{i}" for i in range(5)])
    alone = []
    grow = fast._grow
    monkeypatch.setattr(fast, "_grow", lambda *args: alone.append(args) or grow(*args))
    among = fast.paths_among(graph, [1, 0], 4, 3)
    assert alone, "the search ran alone"
    _same(among[0], reference.paths_between(graph, 1, 0, 4, 3))


def test_truncation_is_exercised() -> None:
    graph = _random_graph(0)
    assert fast.paths_from(graph, 0, 3, 300).truncated
    assert fast.paths_between(graph, 0, 1, 4, 40).truncated


@pytest.mark.parametrize("seed", range(4))
def test_masses_equal_the_per_path_loop(seed: int) -> None:
    graph = _random_graph(seed)
    rng = np.random.default_rng(seed)
    weight = rng.uniform(0.01, 1, len(graph.fact_head))
    degree = rng.uniform(1, 5, graph.n_entities)

    def steps(entities: np.ndarray, facts: np.ndarray) -> np.ndarray:
        return weight[facts] / degree[entities]

    for search in (fast.paths_from(graph, 0, 4, 5000), fast.paths_between(graph, 0, 3, 5, 5000)):
        for start, end in ((1.0, 0.0), (0.3, 0.7)):
            want = reference.path_masses(search.paths, weight, degree, start, end)
            np.testing.assert_allclose(search.masses(steps, start, end), want, rtol=1e-12)
        assert np.array_equal(search.facts(), sorted({f for p in search.paths for f in p.facts}))
        assert search.lengths() == {
            n: sum(len(p) == n for p in search.paths) for n in {len(p) for p in search.paths}
        }


def test_paths_match_on_the_sample_graph(graph_memory) -> None:
    graph = graph_of(graph_memory._view, QueryContext("", 5))
    degree = np.diff(graph.entity_facts.indptr)
    anchors = [int(e) for e in np.argsort(-degree, kind="stable")[:8]]
    for source, target in itertools.permutations(anchors, 2):
        _same(
            fast.paths_between(graph, source, target, 3, 2000),
            reference.paths_between(graph, source, target, 3, 2000),
        )
    for source in anchors:
        _same(fast.paths_from(graph, source, 3, 50), reference.paths_from(graph, source, 3, 50))
    pairs = itertools.combinations(anchors, 2)
    among = fast.paths_among(graph, anchors, 3, 2000)
    for got, (source, target) in zip(among, list(pairs), strict=True):
        _same(got, reference.paths_between(graph, source, target, 3, 2000))


def test_link_graph_is_the_edge_by_edge_build(graph_memory) -> None:
    """GRAM's link graph (vectorised) holds the edges of the slow build, in its order;
    the paths among the sample's busiest vertices on it are the edge-by-edge search's."""
    view = graph_memory._view
    graph = graph_of(view, QueryContext("", 5))
    links = passage_links(view)
    edges = link_graph(links, graph)
    built = list(
        zip(
            edges.fact_head.tolist(),
            edges.fact_tail.tolist(),
            edges.kind.tolist(),
            edges.ref.tolist(),
            strict=True,
        )
    )
    expected = reference.link_graph_edges(links, graph)
    assert built == expected
    kinds = {kind for _, _, kind, _ in expected}
    assert {FACT, MENTION} <= kinds, "facts and untyped mentions both present"
    specificity = 1.0 / np.maximum(links.counts, 1)
    weights, degrees = [], np.zeros(edges.n_entities)
    for head, tail, kind, fact in expected:
        if kind == FACT:
            weight = graph.fact_confidence[fact] * min(specificity[head], specificity[tail])
        elif kind == MENTION:
            phrase = links.node_ids[head].startswith("phrase:")
            weight = specificity[head] * (PHRASE_WEIGHT if phrase else 1.0)
        else:
            weight = NEXT_TURN_WEIGHT
        weights.append(weight)
        degrees[head] += weight
        degrees[tail] += weight
    np.testing.assert_allclose(edges.weight, weights, rtol=1e-12)
    np.testing.assert_allclose(edges.degree, np.where(degrees > 0, degrees, 1.0), rtol=1e-12)
    degree = np.diff(edges.entity_facts.indptr)
    anchors = [int(v) for v in np.argsort(-degree[: edges.n_nodes], kind="stable")[:5]]
    among = fast.paths_among(edges, anchors, 4, 300)
    for got, (source, target) in zip(among, itertools.combinations(anchors, 2), strict=True):
        _same(got, reference.paths_between(edges, source, target, 4, 300))
    assert any(len(s) for s in among), "the busiest vertices are joined"


@pytest.mark.parametrize("seed", range(3))
def test_shared_trees_walk_and_join_as_searches_alone(seed: int) -> None:
    """One `PathTrees` serving neighbourhoods and pair searches in either order (levels
    grown by one reused by the other, past the limit or within it) answers as each
    search run alone."""
    graph = _random_graph(seed)
    rng = np.random.default_rng(300 + seed)
    entities = [0, *(int(e) for e in rng.choice(graph.n_entities, 5)), 1]
    for length, limit, walks_first in itertools.product([2, 3, 4], [3, 40, 10_000], [True, False]):
        trees = fast.PathTrees(graph)
        walks = [trees.walk(e, length, limit) for e in entities] if walks_first else []
        among = trees.among(entities, length + 1, limit)
        if not walks_first:
            walks = [trees.walk(e, length, limit) for e in entities]
        for got, source in zip(walks, entities, strict=True):
            _same(got, reference.paths_from(graph, source, length, limit))
        pairs = itertools.combinations(entities, 2)
        for got, (source, target) in zip(among, list(pairs), strict=True):
            _same(got, reference.paths_between(graph, source, target, length + 1, limit))


def test_a_level_cut_short_is_grown_further_when_a_later_search_needs_more() -> None:
    """A search cut at its limit grows only a prefix of its deepest level; a later search
    of the same trees with more room grows the rest and answers as if run alone."""
    graph = _random_graph(0)
    trees = fast.PathTrees(graph)
    _same(trees.walk(0, 2, 40), reference.paths_from(graph, 0, 2, 40))
    tree = trees.tree(0)
    assert len(tree.levels[2]) > 0 and not tree.complete(2), "the level is a prefix"
    _same(trees.walk(0, 2, 10_000), reference.paths_from(graph, 0, 2, 10_000))
    assert tree.complete(2)
    among = trees.among([0, 1, 2], 4, 10_000)
    for got, (source, target) in zip(among, [(0, 1), (0, 2), (1, 2)], strict=True):
        _same(got, reference.paths_between(graph, source, target, 4, 10_000))


def test_pairs_refused_are_not_searched_and_the_others_answer_as_alone() -> None:
    """`among` with `wanted`: a refused pair (by positions) gets an empty search, and every
    other pair the paths it has when all pairs are searched."""
    graph = _random_graph(1)
    entities = [0, 1, 2, 3]
    every = fast.PathTrees(graph).among(entities, 4, 40)
    refused = {(0, 1), (2, 3)}
    some = fast.PathTrees(graph).among(entities, 4, 40, lambda i, j: (i, j) not in refused)
    positions = list(itertools.combinations(range(len(entities)), 2))
    assert any(len(every[positions.index(p)]) for p in refused), "a refused pair has paths"
    for position, got, alone in zip(positions, some, every, strict=True):
        if position in refused:
            assert not got.groups and not got.truncated
        else:
            _same(got, reference.paths_between(graph, *(entities[i] for i in position), 4, 40))
            _same(got, alone)
