"""The passage walk's local push (`PassageGraph.push`, `top_segments` above a threshold)
against the exact personalised PageRank: its error stays within the push's bound, it ranks
the segments as the exact power iteration does, the exact path (threshold 0) is the power
iteration's ranking, and on the sample snapshot `hipporag_ppr` answers the same either
way; and the walk equals, bit for bit, the one before its reset came as entries and its
push read rows from the CSR arrays (`tests/memory/passage_walk_reference.py`)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.linalg import spsolve

from memory import Memory
from memory.csr import add_rows, row_entries
from memory.passage_graph import WALK_THRESHOLD, PassageGraph, passage_graph, transition_of
from memory.snapshot_view import QueryContext
from memory.strategies.ppr import reset_entries
from memory.top import top_positions
from tests.memory import passage_walk_reference as reference

DAMPING = 0.5
SEGMENTS, NODES = 300, 120


def _random_graph(seed: int = 7) -> PassageGraph:
    """Segments linked to nodes at specificity weights (one hub linked to most segments),
    node - node and turn - turn edges, and a few segments and nodes without any edge."""
    rng = np.random.default_rng(seed)
    n = SEGMENTS + NODES
    rows, cols = [], []
    for segment in range(SEGMENTS - 5):  # the last 5 segments have no edge
        for node in rng.choice(NODES - 3, size=rng.integers(1, 5), replace=False):
            rows.append(segment)
            cols.append(SEGMENTS + int(node))
        if rng.random() < 0.8:  # the hub
            rows.append(segment)
            cols.append(SEGMENTS + NODES - 4)
    links = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    specificity = 1.0 / np.maximum(np.asarray(links.sum(axis=0)).ravel(), 1.0)
    weighted = links @ sp.diags(specificity)
    a = SEGMENTS + rng.integers(0, NODES - 4, 40)
    b = SEGMENTS + rng.integers(0, NODES - 4, 40)
    turns = np.arange(0, 60, 2)
    extra = sp.csr_matrix(
        (np.r_[rng.random(40), np.ones(len(turns))], (np.r_[a, turns], np.r_[b, turns + 1])),
        shape=(n, n),
    )
    adjacency = (weighted + weighted.T + extra + extra.T).tocsr()
    adjacency.setdiag(0)
    adjacency.eliminate_zeros()
    transition, degree = transition_of(adjacency)
    return PassageGraph(
        segment_ids=[f"s{i}" for i in range(SEGMENTS)],
        node_ids=[f"n{i}" for i in range(NODES)],
        segment_position={f"s{i}": i for i in range(SEGMENTS)},
        node_position={f"n{i}": i for i in range(NODES)},
        specificity=specificity[SEGMENTS:],
        transition=transition,
        degree=degree,
    )


def _reset(seed: int = 3) -> np.ndarray:
    """A softmax-like prior over 40 segments (one without edges) and two linked nodes."""
    rng = np.random.default_rng(seed)
    reset = np.zeros(SEGMENTS + NODES)
    chosen = rng.choice(SEGMENTS - 5, size=39, replace=False)
    reset[chosen] = np.exp(rng.normal(size=39) / 0.5)
    reset[SEGMENTS - 1] = 0.3
    reset[SEGMENTS + np.array([5, 9])] = 0.2
    return reset


def _entries(reset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A reset vector as `top_segments` takes it: its non-zero positions and values."""
    seeds = np.flatnonzero(reset)
    return seeds, reset[seeds]


def _exact_ppr(graph: PassageGraph, reset: np.ndarray) -> np.ndarray:
    """ppr(p) = (1 - d)(I - dT)^-1 p, solved directly."""
    n = len(reset)
    system = sp.identity(n, format="csc") - DAMPING * graph.transition.tocsc()
    return spsolve(system, (1.0 - DAMPING) * reset / reset.sum())


@pytest.mark.parametrize("threshold", [1e-2, 1e-4, 1e-6, 1e-9])
def test_the_push_error_is_within_its_bound(threshold: float) -> None:
    graph, reset = _random_graph(), _reset()
    exact = _exact_ppr(graph, reset)
    seeds = np.flatnonzero(reset)
    nodes, estimate = graph.push(seeds, reset[seeds], DAMPING, threshold)
    assert len(np.unique(nodes)) == len(nodes)
    gap = exact.copy()
    gap[nodes] -= estimate
    assert gap.min() >= -1e-13, "the push never overestimates"
    bound = threshold * graph.degree
    assert np.all(gap[nodes] <= DAMPING * bound[nodes] + 1e-13)
    others = np.setdiff1d(np.arange(len(reset)), nodes)
    assert np.all(exact[others] <= bound[others] + 1e-13)
    if threshold >= 1e-4:
        assert len(others) > 0, "a coarse threshold leaves nodes unpushed"
    if threshold <= 1e-9:
        assert gap.max() < 1e-8


def test_the_local_walk_ranks_as_the_exact_walk() -> None:
    graph, reset = _random_graph(), _reset()
    exact_top, exact_mass = graph.top_segments(*_entries(reset), DAMPING, 60, threshold=0.0)
    for threshold in (1e-10, WALK_THRESHOLD):
        top, mass = graph.top_segments(*_entries(reset), DAMPING, 60, threshold=threshold)
        assert top[:20].tolist() == exact_top[:20].tolist(), threshold
        assert np.allclose(mass[:20], exact_mass[:20], rtol=threshold * 1e3, atol=0), threshold
    top, mass = graph.top_segments(*_entries(reset), DAMPING, 60, threshold=1e-10)
    assert top.tolist() == exact_top.tolist()
    assert np.allclose(mass, exact_mass, rtol=1e-7)


def test_the_exact_path_is_the_power_iteration_and_unreached_segments_come_last() -> None:
    graph, reset = _random_graph(), _reset()
    mass = graph.walk(reset, DAMPING)[:SEGMENTS]
    top, masses = graph.top_segments(*_entries(reset), DAMPING, SEGMENTS, threshold=0.0)
    assert top.tolist() == np.argsort(-mass, kind="stable").tolist()
    assert np.array_equal(masses, mass[top])
    local, local_mass = graph.top_segments(*_entries(reset), DAMPING, SEGMENTS, threshold=1e-3)
    assert sorted(local.tolist()) == list(range(SEGMENTS))
    unreached = np.flatnonzero(local_mass == 0)
    assert len(unreached) and unreached.min() > np.flatnonzero(local_mass).max()
    assert local[unreached].tolist() == sorted(local[unreached].tolist())


def test_top_positions_is_the_stable_argsort() -> None:
    rng = np.random.default_rng(0)
    for values in (
        rng.integers(0, 20, 500).astype(np.float64),  # many ties
        rng.normal(size=500).astype(np.float32),
    ):
        for count in (0, 1, 7, 100, 499, 500, 600):
            expected = np.argsort(-values, kind="stable")[:count]
            assert top_positions(values, count).tolist() == expected.tolist()


QUERIES = [
    "Who is the CEO of Acme Corporation?",
    "Which city is Priya Natarajan's office in?",
    "What did Acme acquire?",
]


@pytest.mark.parametrize("query", QUERIES)
def test_hipporag_ppr_answers_the_same_with_the_local_walk(
    graph_memory: Memory, query: str
) -> None:
    exact = graph_memory.query(query, strategy="hipporag_ppr", k=10, options={"walk_threshold": 0})
    local = graph_memory.query(query, strategy="hipporag_ppr", k=10)
    # the same passages in the same order; the scores themselves differ, since they blend
    # z(log mass) over the walked candidates and the push leaves far segments at mass 0
    assert [h.segment_id for h in local] == [h.segment_id for h in exact]


def test_the_sample_passage_graph_is_symmetric_and_its_push_is_bounded(
    graph_memory: Memory,
) -> None:
    """The push reads a node's out-edges from its row of the transition: that needs the
    symmetric adjacency the passage graph is built from."""
    graph = passage_graph(graph_memory._view, QueryContext("q", 5, None, False))
    adjacency = graph.transition @ sp.diags(graph.degree)
    assert abs(adjacency - adjacency.T).max() < 1e-12
    reset = np.zeros(len(graph.degree))
    reset[: min(20, graph.n_segments)] = 1.0
    exact = _exact_ppr(graph, reset)
    nodes, estimate = graph.push(np.flatnonzero(reset), reset[reset > 0], DAMPING, 1e-5)
    gap = exact.copy()
    gap[nodes] -= estimate
    assert gap.min() >= -1e-13 and np.all(gap <= 1e-5 * graph.degree + 1e-13)


def _same_walk(graph: PassageGraph, reset: np.ndarray, count: int, threshold: float) -> None:
    """`top_segments` of the reset's entries equals the reference's of the vector, bit for
    bit."""
    top, mass = graph.top_segments(*_entries(reset), DAMPING, count, threshold)
    want_top, want_mass = reference.top_segments(graph, reset, DAMPING, count, threshold)
    assert top.tolist() == want_top.tolist()
    assert mass.tobytes() == want_mass.tobytes()


@pytest.mark.parametrize("seed", range(4))
def test_the_walk_is_the_reference_walk_bit_for_bit(seed: int) -> None:
    """Rows read from the CSR arrays, the reset as entries and the bounded search for
    unreached segments change no position and no mass."""
    graph = _random_graph(seed)
    for reset_seed in range(3):
        reset = _reset(reset_seed)
        for count, threshold in itertools.product(
            [1, 60, SEGMENTS, SEGMENTS + 10], [0.0, 1e-2, 1e-3, WALK_THRESHOLD, 1e-10]
        ):
            _same_walk(graph, reset, count, threshold)
        seeds = np.flatnonzero(reset)
        nodes, estimate = graph.push(seeds, reset[seeds], DAMPING, WALK_THRESHOLD)
        want_nodes, want_estimate = reference.push(
            graph, seeds, reset[seeds], DAMPING, WALK_THRESHOLD
        )
        assert nodes.tolist() == want_nodes.tolist()
        assert estimate.tobytes() == want_estimate.tobytes()


def test_row_entries_are_scipys_rows() -> None:
    transition = _random_graph().transition
    rng = np.random.default_rng(1)
    for rows in (np.arange(0), rng.permutation(transition.shape[0])[:50], np.array([3, 3, 0])):
        columns, values, counts = row_entries(transition, rows)
        want = transition[rows]
        assert columns.tolist() == want.indices.tolist()
        assert values.tobytes() == want.data.tobytes()
        assert counts.tolist() == np.diff(want.indptr).tolist()


@pytest.mark.parametrize("wide_index", [False, True])
def test_add_rows_is_numpys_add_at_bit_for_bit(wide_index: bool) -> None:
    """The push step in scipy's C loops adds what `np.add.at` of the scaled rows added, in
    the same order (repeated rows, rows without entries, a vector already holding mass),
    for int32 and int64 indexed matrices alike."""
    transition = _random_graph().transition.copy()
    if wide_index:
        transition.indptr = transition.indptr.astype(np.int64)
        transition.indices = transition.indices.astype(np.int64)
    rng = np.random.default_rng(2)
    empty = np.flatnonzero(np.diff(transition.indptr) == 0)[:2]
    for rows in (
        np.arange(0),
        rng.permutation(transition.shape[0])[:80],
        np.r_[np.array([3, 3, 0]), empty, rng.integers(0, transition.shape[0], 200)],
    ):
        scale = rng.random(len(rows)) * 1e-3
        start = rng.random(transition.shape[0]) * 1e-4
        got, want = start.copy(), start.copy()
        columns = add_rows(transition, rows, scale, got)
        want_columns = reference.numpy_add_rows(transition, rows, scale, want)
        assert columns.tolist() == want_columns.tolist()
        assert got.tobytes() == want.tobytes()
        if len(rows):
            assert not np.array_equal(got, start), "the rows were added"


@pytest.mark.parametrize("link_share", [0.0, 0.3, 1.0])
def test_reset_entries_are_the_reference_vectors_entries(
    graph_memory: Memory, link_share: float
) -> None:
    """`hipporag_ppr`'s reset as entries: the non-zero entries of the vector it filled
    before, bit for bit (passages alone, links alone, both, neither)."""
    graph = passage_graph(graph_memory._view, QueryContext("q", 5, None, False))
    rng = np.random.default_rng(5)
    segments = [graph.segment_ids[i] for i in rng.permutation(graph.n_segments)[:30]]
    mass = np.exp(rng.normal(size=30))
    passages = {s: float(w) for s, w in zip(segments, mass / mass.sum(), strict=True)}
    passages[segments[0]] = 0.0  # a mass that underflowed
    nodes = [graph.node_ids[i] for i in rng.permutation(len(graph.node_ids))[:6]]
    links = {
        n: float(w) * graph.specificity[graph.node_position[n]]
        for n, w in zip(nodes, rng.random(6), strict=True)
    }
    for given, linked in ((passages, links), (passages, {}), ({}, links), ({}, {})):
        reset = reference.reset_vector(graph, given, linked, link_share)
        seeds, weights = reset_entries(graph, given, linked, link_share)
        assert seeds.tolist() == np.flatnonzero(reset).tolist()
        assert weights.tobytes() == reset[seeds].tobytes()
        if len(seeds):
            _same_walk(graph, reset, 200, WALK_THRESHOLD)
            _same_walk(graph, reset, 200, 0.0)


def test_the_walks_log_masses_are_the_per_value_logs() -> None:
    """`hipporag_ppr` takes the log of its candidates' masses as one array: the same
    values, to the bit, as the log of each mass on its own (as it took them before)."""
    rng = np.random.default_rng(4)
    mass = np.r_[np.exp(rng.normal(-12, 4, 500)), 0.0, 1.0, 1e-300]
    assert np.log(mass + 1e-12).tolist() == [float(np.log(m + 1e-12)) for m in mass]
