"""PersonalAI's A* runs the searches from one start to all its targets together
(`memory.personalai.astar._all_by_depths`); each pair's path, expansion count and
expanded nodes, and so the whole traversal, must be the heap loop's
(`tests/memory/astar_reference`) pair by pair: with node vectors of any length (a
target's own h is then not 0), with targets that have no vector (h = 1/2 towards them
from everywhere), with tied and opposite heuristics (h in {0, 1/2, 1}: the heap search
takes over), under tight budgets. The neighbour lists A* reads in one pass are those of
the former `np.unique` pass."""

from __future__ import annotations

import itertools
from dataclasses import asdict

import numpy as np
import pytest

from memory.personalai import hypergraph as hypergraph_module
from memory.personalai.astar import ALGORITHM, AStarParams, _representative, astar
from memory.personalai.hypergraph import EPISODE, FACT, THESIS, Hypergraph, first_pairs
from memory.personalai.traversal import Step, Traversal
from tests.memory import astar_reference

PARAMS = [
    AStarParams(),
    AStarParams(max_depth=2, max_passed_nodes=40),
    AStarParams(max_depth=1, max_passed_nodes=7),
    AStarParams(max_passed_nodes=1),
    AStarParams(max_passed_nodes=0),
]


def _hypergraph(seed: int, n_nodes: int = 1_500, n_facts: int = 5_000) -> Hypergraph:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, n_nodes + 1) ** 0.8  # a few hubs
    pick = lambda size: rng.choice(n_nodes, size=size, p=weights / weights.sum())  # noqa: E731
    facts = [[int(h), int(t)] for h, t in zip(pick(n_facts), pick(n_facts), strict=True)]
    facts += facts[:200]  # parallel facts: a neighbour met twice
    theses = [sorted(set(pick(int(rng.integers(1, 5))).tolist())) for _ in range(200)]
    episodes = [sorted(set(pick(int(rng.integers(1, 8))).tolist())) for _ in range(1_000)]
    members = [*facts, *theses, *episodes]
    kinds = [FACT] * len(facts) + [THESIS] * len(theses) + [EPISODE] * len(episodes)
    vectors = rng.normal(size=(len(members), 8)).astype(np.float32)
    return Hypergraph.from_members(n_nodes, members, kinds, vectors, np.zeros((n_nodes, 8)))


def _expected(hypergraph: Hypergraph, linked: list[int], params: AStarParams) -> Traversal:
    """`astar` built pair by pair from the heap loop."""
    traversal = Traversal()
    pairs = []
    for start, target in itertools.combinations(dict.fromkeys(linked), 2):
        path, expanded, closed = astar_reference.shortest_path(hypergraph, start, target, params)
        traversal.visited |= closed
        pairs.append({"from": start, "to": target, "path": path or None, "expanded": expanded})
        if not path:
            continue
        traversal.visited |= set(path)
        joins = [hypergraph.joining(u, v) for u, v in itertools.pairwise(path)]
        chain = tuple(
            Step(_representative(hypergraph, j), u, v)
            for j, (u, v) in zip(joins, itertools.pairwise(path), strict=True)
        )
        for join in joins:
            for hyperedge in join.tolist():
                traversal.retrieve(ALGORITHM, hyperedge, chain)
    traversal.details[ALGORITHM] = {**asdict(params), "pairs": pairs}
    return traversal


def _same(hypergraph: Hypergraph, linked: list[int], params: AStarParams) -> None:
    expected = _expected(hypergraph, linked, params)
    found = astar(hypergraph, linked, params)
    assert found.details == expected.details
    assert list(found.chains) == list(expected.chains)
    assert found.chains == expected.chains
    assert found.found_by == expected.found_by
    assert found.visited == expected.visited


def _linked(rng: np.random.Generator, n_nodes: int, count: int) -> list[int]:
    hubs = rng.integers(0, 20, count // 2)  # hubs fill the layers
    rest = rng.integers(0, n_nodes, count - len(hubs))
    return [int(n) for n in rng.permutation(np.r_[hubs, rest])]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("params", PARAMS, ids=str)
def test_vectors_of_any_length_and_nodes_without_one(seed: int, params: AStarParams) -> None:
    """Vectors of lengths 0.3-1.5 on the first 1,000 nodes, none on the last 500."""
    rng = np.random.default_rng(seed)
    hypergraph = _hypergraph(seed)
    vectors = rng.normal(size=(1_000, 8))
    vectors *= rng.uniform(0.3, 1.5, (1_000, 1)) / np.linalg.norm(vectors, axis=1, keepdims=True)
    hypergraph.node_vectors = vectors.astype(np.float32)
    for linked in (_linked(rng, 1_500, 6), _linked(rng, 1_500, 11), [3, 1_200, 7, 1_499, 0]):
        _same(hypergraph, linked, params)


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("params", PARAMS[:3], ids=str)
def test_tied_and_opposite_heuristics(seed: int, params: AStarParams) -> None:
    """Node vectors drawn from four axes (e0, -e0, e1, e2) on the first 1,200 nodes: h is
    0, 1/2 or 1 exactly, so pops go by the tie-breaks, and some searches meet h = 1."""
    rng = np.random.default_rng(seed)
    hypergraph = _hypergraph(seed)
    axes = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float32)
    hypergraph.node_vectors = np.pad(axes[rng.integers(0, len(axes), 1_200)], ((0, 0), (0, 5)))
    for linked in (_linked(rng, 1_500, 8), _linked(rng, 1_500, 8), [0, 1_300, 2, 1_400]):
        _same(hypergraph, linked, params)


@pytest.mark.parametrize("seed", [5, 6])
def test_neighbour_rows_are_the_unique_pass(seed: int) -> None:
    rng = np.random.default_rng(seed)
    hypergraph = _hypergraph(seed)
    for size in (1, 5, 80, 1_500):
        nodes = rng.permutation(1_500)[:size]
        members, counts = hypergraph.neighbour_rows(nodes)
        assert counts.sum() == len(members)
        lists = np.split(members, np.cumsum(counts)[:-1])
        for node, found in zip(nodes.tolist(), lists, strict=True):
            edges = hypergraph.hyperedges_of(node)
            met = np.concatenate([hypergraph.members_of(e) for e in edges]) if len(edges) else []
            met = np.asarray(met, np.int64)
            _, first = np.unique(met, return_index=True)
            expected = met[np.sort(first)][::-1]
            assert np.array_equal(found, expected[expected != node]), node


def test_first_pairs_is_the_unique_pass() -> None:
    rng = np.random.default_rng(7)
    for size, n_columns in ((0, 5), (1, 5), (500, 7), (20_000, 3_000), (3_000, 1 << 50)):
        rows = np.sort(rng.integers(0, 40, size))
        columns = rng.integers(0, min(n_columns, 60), size)
        _, at = np.unique(rows * n_columns + columns, return_index=True)
        first = first_pairs(rows, columns, 40, n_columns)
        assert np.array_equal(np.flatnonzero(first), np.sort(at))


@pytest.mark.parametrize("batch", [1, 700, 10**9])
def test_adjacency_holds_every_neighbour_row(monkeypatch, batch: int) -> None:
    """Built in batches of any size, node u's slice of the adjacency is its
    `neighbour_rows`."""
    monkeypatch.setattr(hypergraph_module, "ADJACENCY_BATCH", batch)
    hypergraph = _hypergraph(8)
    indptr, neighbours = hypergraph.adjacency
    members, counts = hypergraph.neighbour_rows(np.arange(hypergraph.n_nodes))
    assert np.array_equal(np.diff(indptr), counts)
    assert np.array_equal(neighbours, members)
