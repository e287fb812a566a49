"""WaterCircles, BeamSearch and A* on sparse operations return exactly what the
one-hyperedge-at-a-time loops returned (`water_circles_reference`, `beam_reference`,
`astar_reference`): the same hyperedges, paths and chains in the same order, visited
nodes and details, on the sample's hypergraph and on random hypergraphs of 10,000 facts
with thesis and episode hyperedges (restricted or not, strict or not, each parameter
variant)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from memory.personalai import astar as astar_module
from memory.personalai import beam
from memory.personalai import water_circles as water_circles_module
from memory.personalai.astar import AStarParams, Expansions, shortest_path
from memory.personalai.beam import BeamParams, beam_paths
from memory.personalai.hypergraph import (
    EPISODE,
    FACT,
    THESIS,
    EdgeSimilarity,
    Hypergraph,
    personal_graph_of,
    smallest_first,
)
from memory.personalai.water_circles import WaterCirclesParams, water_circles
from memory.snapshot_view import QueryContext
from tests.memory import astar_reference, beam_reference
from tests.memory import water_circles_reference as reference

UNBOUNDED = WaterCirclesParams(max_ring_crossings=None)
"""The paper's rings, without the hub budget the reference loop does not have."""


def _random_hypergraph(seed: int, n_nodes: int = 2_500, n_facts: int = 10_000) -> Hypergraph:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, n_nodes + 1) ** 0.8  # a few hubs, as real graphs have
    pick = lambda size: rng.choice(n_nodes, size=size, p=weights / weights.sum())  # noqa: E731
    facts = [[int(h), int(t)] for h, t in zip(pick(n_facts), pick(n_facts), strict=True)]
    theses = [sorted(set(pick(int(rng.integers(1, 5))).tolist())) for _ in range(300)]
    episodes = [sorted(set(pick(int(rng.integers(1, 8))).tolist())) for _ in range(2_000)]
    members = [*facts, *theses, *episodes]
    kinds = [FACT] * len(facts) + [THESIS] * len(theses) + [EPISODE] * len(episodes)
    vectors = rng.normal(size=(len(members), 8)).astype(np.float32)
    return Hypergraph.from_members(n_nodes, members, kinds, vectors, np.zeros((n_nodes, 8)))


def _same(hypergraph: Hypergraph, linked: list[int], params: WaterCirclesParams) -> None:
    similarity = hypergraph.vectors @ hypergraph.vectors[0]
    expected = reference.water_circles(hypergraph, linked, similarity, params)
    found = water_circles(hypergraph, linked, similarity, params)
    assert list(found.chains) == list(expected.chains), "same hyperedges, same order"
    assert found.chains == expected.chains
    assert found.found_by == expected.found_by
    assert found.visited == expected.visited
    assert found.details == expected.details


def _same_beams(
    hypergraph: Hypergraph, linked: list[int], similarity: np.ndarray, params: BeamParams
) -> None:
    """The beam's final paths from each start are the loop's, in the same order."""
    for start in dict.fromkeys(linked):
        expected = beam_reference.beam_paths(hypergraph, start, similarity, params)
        assert beam_paths(hypergraph, start, similarity, params) == expected


def _same_shortest_paths(hypergraph: Hypergraph, linked: list[int], params: AStarParams) -> None:
    """A*'s path, expansion count and expanded nodes for each pair are the loop's, alone
    and with the neighbours and heuristics kept across the pairs as `astar` keeps them."""
    shared = Expansions(hypergraph, list(dict.fromkeys(linked)))
    for start, target in itertools.combinations(dict.fromkeys(linked), 2):
        expected = astar_reference.shortest_path(hypergraph, start, target, params)
        assert shortest_path(hypergraph, start, target, params) == expected
        assert shortest_path(hypergraph, start, target, params, shared) == expected


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("linked", [[0], [0, 7], [3, 11, 40], [2_400, 5, 2_400], [2_499]], ids=str)
def test_random_10k_fact_hypergraphs(seed: int, linked: list[int]) -> None:
    _same(_random_hypergraph(seed), linked, UNBOUNDED)


@pytest.mark.parametrize("barred", [(EPISODE,), (FACT, THESIS)])
def test_restricted_and_unstrict(barred: tuple[int, ...]) -> None:
    hypergraph = _random_hypergraph(2).restricted(barred)
    _same(
        hypergraph,
        [1, 9],
        WaterCirclesParams(strict_filter=False, max_depth=2, max_ring_crossings=None),
    )
    _same(hypergraph, [1, 9, 30], WaterCirclesParams(max_depth=4, max_ring_crossings=None))


def test_sample_hypergraph(graph_memory) -> None:
    view = graph_memory._view
    personal = personal_graph_of(view, QueryContext("Who is the CEO of Acme?", 5))
    hypergraph = personal.hypergraph
    degree = np.diff(hypergraph.incidence.indptr)
    hubs = np.argsort(-degree, kind="stable")[:6].tolist()
    similarity = hypergraph.vectors @ hypergraph.vectors[0]
    for linked in ([hubs[0]], hubs[:2], hubs[1:4], hubs):
        _same(hypergraph, linked, UNBOUNDED)
        _same_beams(hypergraph, linked, similarity, BeamParams())
        _same_shortest_paths(hypergraph, linked, AStarParams())


@pytest.mark.parametrize("seed", [0, 3])
@pytest.mark.parametrize(
    "params",
    [
        BeamParams(),
        BeamParams(same_path_intersection_by_node=True, max_paths=4),
        BeamParams(diff_paths_intersection_by_node=True, diff_paths_intersection_by_rel=True),
        BeamParams(final_sorting_mode="continuous_first", max_depth=3),
    ],
    ids=["defaults", "revisits", "sharing", "continuous_first"],
)
def test_beam_search_on_random_10k_fact_hypergraphs(seed: int, params: BeamParams) -> None:
    hypergraph = _random_hypergraph(seed)
    similarity = hypergraph.vectors @ hypergraph.vectors[1]
    for linked in ([0], [5, 2_000], [2_499, 17, 5]):
        _same_beams(hypergraph, linked, similarity, params)


@pytest.mark.parametrize("seed", [0, 4])
@pytest.mark.parametrize(
    "params",
    [AStarParams(), AStarParams(max_depth=2, max_passed_nodes=40)],
    ids=["defaults", "tight"],
)
def test_astar_on_random_10k_fact_hypergraphs(seed: int, params: AStarParams) -> None:
    rng = np.random.default_rng(seed)
    hypergraph = _random_hypergraph(seed)
    vectors = rng.normal(size=(hypergraph.n_nodes, 8))
    hypergraph.node_vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(
        np.float32
    )
    for linked in ([0, 7], [5, 2_000, 2_499], [1_000, 1_500, 2_200, 30]):
        _same_shortest_paths(hypergraph, linked, params)


@pytest.mark.parametrize("seed", [0, 5])
def test_astar_with_tied_and_opposite_heuristics(seed: int, monkeypatch) -> None:
    """Node vectors drawn from four axes (e0, -e0, e1, e2) towards targets on e0: h is 0,
    1 or 1/2 exactly, so pops are decided by the tie-breaks (h, then push order), and a
    node at h = 1 ties a next-depth push at h = 0; the search by depths hands those
    searches to the heap search, and both return what the loop returns."""
    rng = np.random.default_rng(seed)
    hypergraph = _random_hypergraph(seed)
    axes = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float32)
    axis = rng.integers(0, len(axes), hypergraph.n_nodes)
    hypergraph.node_vectors = np.pad(axes[axis], ((0, 0), (0, 5)))
    on_e0 = np.flatnonzero(axis == 0)
    by_depths = []
    original = astar_module._by_depths
    monkeypatch.setattr(
        astar_module,
        "_by_depths",
        lambda *args: by_depths.append(original(*args)) or by_depths[-1],
    )
    for params in (AStarParams(), AStarParams(max_depth=3, max_passed_nodes=60)):
        for linked in (on_e0[:3].tolist(), on_e0[-4:].tolist(), [int(on_e0[5]), 2_499]):
            _same_shortest_paths(hypergraph, linked, params)
    assert any(found is None for found in by_depths), "some searches met a node at h = 1"
    assert any(found is not None for found in by_depths), "others ran by depths"


def test_stacked_hyperedge_vectors_multiply_like_their_concatenation(graph_memory) -> None:
    view = graph_memory._view
    hypergraph = personal_graph_of(view, QueryContext("Who is the CEO of Acme?", 5)).hypergraph
    question = view.embed_query("Who is the CEO of Acme?")
    whole = np.asarray(hypergraph.vectors)
    assert whole.shape == hypergraph.vectors.shape
    # BLAS may sum a row's products in another order for another matrix shape: equal to
    # the last bits of float32, not bitwise
    np.testing.assert_allclose(hypergraph.vectors @ question, whole @ question, atol=1e-6)
    for row in (0, len(whole) // 2, len(whole) - 1):
        assert np.array_equal(hypergraph.vectors[row], whole[row])


@pytest.mark.parametrize("head", [1, 2])
def test_beam_search_reads_past_a_short_head(monkeypatch, head: int) -> None:
    """With a head of one or two candidates per beam slot, the selection often runs out of
    it and reads the whole order: the paths are still the loop's."""
    monkeypatch.setattr(beam, "HEAD", head)
    hypergraph = _random_hypergraph(5)
    similarity = hypergraph.vectors @ hypergraph.vectors[2]
    for params in (BeamParams(), BeamParams(diff_paths_intersection_by_node=True)):
        _same_beams(hypergraph, [0, 5, 2_000], similarity, params)


def test_edge_similarity_is_the_product_row_by_row() -> None:
    """Scores asked for in any batches are the same bits, and the whole product's values."""
    hypergraph = _random_hypergraph(6)
    question = hypergraph.vectors[3]
    lazy, whole = EdgeSimilarity(hypergraph.vectors, question), hypergraph.vectors @ question
    rng = np.random.default_rng(6)
    picked = rng.choice(hypergraph.n_hyperedges, 500)
    first = lazy[picked]
    np.testing.assert_allclose(first, whole[picked], atol=1e-6)
    assert lazy[int(picked[7])] == first[7]
    scores = lazy.scores()
    assert np.array_equal(scores[picked], first)
    fresh = EdgeSimilarity(hypergraph.vectors, question)
    assert np.array_equal(fresh[picked[::-1]], first[::-1])
    np.testing.assert_allclose(scores, whole, atol=1e-6)


@pytest.mark.parametrize("linked", [[0], [3, 11, 40]], ids=str)
def test_water_circles_hub_budget(linked: list[int]) -> None:
    """A budget no ring reaches leaves the search as the loop's; a small one crosses at
    most that many hyperedges per circle and ring, the most similar of those it could."""
    hypergraph = _random_hypergraph(7)
    similarity = hypergraph.vectors @ hypergraph.vectors[0]
    unbounded = water_circles(hypergraph, linked, similarity, UNBOUNDED)
    roomy = WaterCirclesParams(max_ring_crossings=hypergraph.n_hyperedges)
    found = water_circles(hypergraph, linked, similarity, roomy)
    assert found.chains == unbounded.chains and found.visited == unbounded.visited
    tight = WaterCirclesParams(max_ring_crossings=5)
    bounded = water_circles(hypergraph, linked, similarity, tight)
    details = bounded.details["water_circles"]
    assert details["crossed"] <= 5 * len(linked) * details["rings"]
    assert len(bounded.visited) < len(unbounded.visited)
    ring_one = [e for e, chain in bounded.chains.items() if len(chain) == 1]
    seed_edges = hypergraph.hyperedges_of(linked[0])
    if len(linked) == 1 and len(seed_edges) > 5:
        best = set(seed_edges[np.argsort(-similarity[seed_edges], kind="stable")[:5]].tolist())
        assert set(ring_one) <= best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_smallest_first_is_the_stable_sort_head(seed: int) -> None:
    """The partial sort A* and WaterCircles' hub budget take their cut with gives the head
    of the full stable sort, ties at the cut included in index order (values drawn from a
    few levels, so most of them tie)."""
    rng = np.random.default_rng(seed)
    for size in (0, 1, 7, 300, 5_000):
        values = rng.integers(0, 6, size).astype(np.float32) / 7
        full = np.argsort(values, kind="stable")
        for count in (0, 1, 2, 5, 64, size - 1, size, size + 3):
            expected = full[: max(count, 0)]
            assert np.array_equal(smallest_first(values, count), expected), (size, count)


@pytest.mark.parametrize("seed", [0, 5])
def test_hub_budget_on_random_hypergraphs(seed: int) -> None:
    """WaterCircles under the hub budget crosses, in each ring of each circle, the
    `max_ring_crossings` most similar of the hyperedges it could cross (ties to the
    loop's order): the crossed hyperedges are those a full stable sort of the candidates
    picks, recomputed here from the circles' frontier ring by ring."""
    hypergraph = _random_hypergraph(seed)
    similarity = np.round(hypergraph.vectors @ hypergraph.vectors[0], 1)  # many ties
    params = WaterCirclesParams(max_ring_crossings=5)
    picked: list[np.ndarray] = []
    original = water_circles_module._crossing

    def checked(hg, circles, sim, prm, i, frontier):  # type: ignore[no-untyped-def]
        node, edge = original(
            hg, circles, sim, WaterCirclesParams(max_ring_crossings=None), i, frontier
        )
        if len(edge) > prm.max_ring_crossings:
            best = np.sort(np.argsort(-sim[edge], kind="stable")[: prm.max_ring_crossings])
            node, edge = node[best], edge[best]
        found = original(hg, circles, sim, prm, i, frontier)
        assert np.array_equal(found[0], node) and np.array_equal(found[1], edge)
        picked.append(edge)
        return found

    water_circles_module._crossing = checked
    try:
        water_circles(hypergraph, [0, 7, 40], similarity, params)
    finally:
        water_circles_module._crossing = original
    assert any(len(e) == params.max_ring_crossings for e in picked), "the budget was used"


def test_edge_similarity_reads_repeated_rows_once_each() -> None:
    """Asked for many rows with repeats (a beam step asks for a hub episode once per
    member), the scores are those of the whole product, and each row is read once."""
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(3_000, 16)).astype(np.float32)
    question = rng.normal(size=16).astype(np.float32)
    rows = rng.integers(0, 3_000, 5_000)
    similarity = EdgeSimilarity(vectors, question)
    read: list[np.ndarray] = []
    compute = similarity._compute
    similarity._compute = lambda r: (read.append(r), compute(r))  # type: ignore[method-assign]
    got = similarity[rows]
    assert np.array_equal(got, EdgeSimilarity(vectors, question).scores()[rows])
    assert np.array_equal(np.concatenate(read), np.unique(rows))
