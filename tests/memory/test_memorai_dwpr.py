"""MemORAI retrieval: the DW-PR iteration, the query subgraph and its Eq. 1 weights, seed
paths on hand-built graphs, and `memorai_dwpr` end to end on the sample snapshot."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest
import scipy.sparse as sp

from memory.dwpr import dynamic_weighted_pagerank, seed_distribution
from memory.graph import MemoryGraph, graph_of
from memory.linking import similar_entities, similar_entity_positions
from memory.memorai_paths import anchors_of, segment_paths
from memory.memorai_subgraph import (
    ProvenanceStructure,
    build_structure,
    edge_weights,
    global_nodes,
    induced,
    node_similarity,
    query_subgraph,
    with_nodes,
)
from memory.node_vectors import entity_vectors, segment_vectors
from memory.snapshot_view import QueryContext
from memory.strategies.memorai_dwpr import prior_seed
from tests.memory.memorai_cases import paths_by_every_fact, random_ask
from transforms.graph_structures import binary_pattern

# --- DW-PR on hand-built graphs ---------------------------------------------------------


def _star(to_b: float, to_c: float) -> sp.csr_matrix:
    """a -> b, a -> c with the given weights; b and c link back to a with weight 1."""
    rows, cols = [0, 0, 1, 2], [1, 2, 0, 0]
    return sp.csr_matrix(([to_b, to_c, 1.0, 1.0], (rows, cols)), shape=(3, 3))


def test_query_weights_change_the_ranking():
    seed = np.array([1.0, 0.0, 0.0])
    favour_b = dynamic_weighted_pagerank(_star(0.9, 0.1), seed).scores
    favour_c = dynamic_weighted_pagerank(_star(0.1, 0.9), seed).scores
    uniform = dynamic_weighted_pagerank(_star(1.0, 1.0), seed).scores
    assert favour_b[1] > favour_b[2]
    assert favour_c[2] > favour_c[1]
    assert uniform[1] == pytest.approx(uniform[2])
    # Eq. 3 normalises per source node: scaling all of a's out-weights changes nothing
    scaled = dynamic_weighted_pagerank(_star(9.0, 1.0), seed).scores
    np.testing.assert_allclose(scaled, favour_b, atol=1e-9)


def test_converges_to_the_closed_form_and_sums_to_one():
    rng = np.random.default_rng(7)
    dense = rng.random((6, 6)) * (rng.random((6, 6)) < 0.6)
    np.fill_diagonal(dense, 0.0)
    dense[:, 0] += 0.1  # every node has an out-edge: no dangling mass
    dense[0, 0] = 0.0
    dense[0, 1] += 0.1
    seed = rng.random(6)
    d = 0.85
    result = dynamic_weighted_pagerank(sp.csr_matrix(dense), seed, damping=d, tolerance=1e-12)
    transition = dense / dense.sum(axis=1, keepdims=True)
    p = seed / seed.sum()
    expected = (1 - d) * np.linalg.solve(np.eye(6) - d * transition.T, p)
    assert result.converged and 1 < result.iterations < 500
    np.testing.assert_allclose(result.scores, expected, atol=1e-9)
    assert result.scores.sum() == pytest.approx(1.0)


def test_dangling_nodes_and_negative_weights_keep_the_mass():
    # node 2 has no out-edge; the negative weight 0 -> 3 is clamped, so 3 gets reset mass only
    weights = sp.csr_matrix(([1.0, -0.5, 1.0], ([0, 0, 1], [2, 3, 2])), shape=(4, 4))
    result = dynamic_weighted_pagerank(weights, np.array([0.5, 0.2, -0.3, 0.3]), damping=0.5)
    assert result.converged
    assert result.scores.sum() == pytest.approx(1.0)
    assert result.scores[2] > result.scores[1]  # fed by both 0 and 1
    seed = seed_distribution(np.array([0.5, 0.2, -0.3, 0.3]))
    assert seed[2] == 0.0 and seed.sum() == pytest.approx(1.0)


def test_zero_seed_is_uniform_and_bad_inputs_are_refused():
    np.testing.assert_allclose(seed_distribution(np.zeros(4)), np.full(4, 0.25))
    with pytest.raises(ValueError, match="damping"):
        dynamic_weighted_pagerank(_star(1, 1), np.ones(3), damping=1.0)
    with pytest.raises(ValueError, match="must be n x n"):
        dynamic_weighted_pagerank(_star(1, 1), np.ones(2))
    assert dynamic_weighted_pagerank(sp.csr_matrix((0, 0)), np.zeros(0)).scores.size == 0


def test_iteration_cap_is_reported():
    result = dynamic_weighted_pagerank(_star(0.9, 0.1), np.array([1.0, 0, 0]), max_iterations=2)
    assert result.iterations == 2 and not result.converged


def _scipy_form(
    weights: sp.csr_matrix, seed: np.ndarray, damping: float, tolerance: float, cap: int
) -> tuple[np.ndarray, int]:
    """The iteration as written before its loop called scipy's C product directly."""
    clamped = sp.csr_matrix(weights, dtype=np.float64, copy=True)
    clamped.data = np.maximum(clamped.data, 0.0)
    clamped.eliminate_zeros()
    out = np.asarray(clamped.sum(axis=1)).ravel()
    inverse = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    incoming = (sp.diags(inverse) @ clamped).tocsr().T.tocsr()
    dangling = out <= 0
    p = seed_distribution(seed)
    rank = p.copy()
    for step in range(1, cap + 1):
        spread = incoming @ rank + rank[dangling].sum() * p
        updated = (1.0 - damping) * p + damping * spread
        change = float(np.abs(updated - rank).sum())
        rank = updated
        if change < tolerance:
            return rank, step
    return rank, cap


@pytest.mark.parametrize("n", [1, 7, 60, 400])
def test_iteration_is_the_scipy_form_bit_for_bit(n):
    """Random weighted graphs with dangling nodes, negative weights and zero seeds: the
    same scores to the last bit and the same number of steps."""
    rng = np.random.default_rng(n)
    for density, damping, tolerance, cap in ((0.05, 0.85, 1e-8, 100), (0.3, 0.5, 1e-12, 7)):
        weights = sp.random(n, n, density=density, format="csr", random_state=rng)
        weights.data -= 0.2  # some negative: clamped
        seed = rng.standard_normal(n)
        result = dynamic_weighted_pagerank(weights, seed, damping, tolerance, cap)
        expected, steps = _scipy_form(weights, seed, damping, tolerance, cap)
        assert result.scores.tobytes() == expected.tobytes()
        assert result.iterations == steps


def test_induced_block_is_scipys():
    """`induced` gives scipy's `matrix[nodes][:, nodes]` (indptr, indices and data),
    reading every row or, on a symmetric matrix with no entry among its first 200 rows,
    mirroring the rows of the nodes among them (given as a count or as a mask)."""
    rng = np.random.default_rng(3)
    matrix = binary_pattern(sp.random(500, 500, density=0.02, format="csr", random_state=rng))
    matrix = binary_pattern(matrix + matrix.T)
    lower = sp.random(300, 200, density=0.05, format="csr", random_state=rng)
    bipartite = binary_pattern(sp.bmat([[None, lower.T], [lower, matrix[:300, :300]]]).tocsr())
    for nodes in (
        np.zeros(0, np.int64),
        np.array([4]),
        np.arange(500),
        np.unique(rng.integers(0, 500, 60)),
        np.unique(rng.integers(0, 500, 300)),
    ):
        for whole, block in (
            (matrix, induced(matrix, nodes)),
            (bipartite, induced(bipartite, nodes, int(np.sum(nodes < 200)))),
            (bipartite, induced(bipartite, nodes, nodes < 200)),
        ):
            expected = whole[nodes][:, nodes].tocsr()
            assert block.shape == expected.shape
            for part in ("indptr", "indices", "data"):
                np.testing.assert_array_equal(getattr(block, part), getattr(expected, part))


# --- subgraph, Eq. 1 weights and paths on a hand-built memory graph ------------------------


def _graph() -> MemoryGraph:
    """Entities P, H, R, X; facts f0 = P work_at H, f1 = H locate_in R, f2 = R twin_of X;
    segments s0 (mentions P, H; supports f0), s1 (H, R; f1), s2 (R, X; f2), s3 (X)."""
    names = ["P", "H", "R", "X"]
    triples = [(0, "work_at", 1), (1, "locate_in", 2), (2, "twin_of", 3)]
    facts = [{"head_name": names[h], "relation": r, "tail_name": names[t]} for h, r, t in triples]
    head = np.array([h for h, _, _ in triples])
    tail = np.array([t for _, _, t in triples])
    n_f = len(triples)
    entity_facts = sp.csr_matrix(
        (np.r_[np.ones(n_f), -np.ones(n_f)], (np.r_[head, tail], np.tile(np.arange(n_f), 2))),
        shape=(4, n_f),
    )
    mentions = sp.csr_matrix(
        (np.ones(7), ([0, 0, 1, 1, 2, 2, 3], [0, 1, 1, 2, 2, 3, 3])), shape=(4, 4)
    )
    fact_segments = sp.csr_matrix((np.ones(3), ([0, 1, 2], [0, 1, 2])), shape=(3, 4))
    return MemoryGraph(
        entity_ids=[f"e{i}" for i in range(4)],
        entity_names=names,
        segment_ids=[f"s{i}" for i in range(4)],
        facts=facts,
        fact_head=head,
        fact_tail=tail,
        fact_confidence=np.ones(n_f),
        fact_vectors=np.eye(n_f, 4, dtype=np.float32),
        entity_facts=entity_facts,
        mentions=mentions,
        fact_segments=fact_segments,
    )


def _provenance(graph: MemoryGraph) -> ProvenanceStructure:
    """`_graph` with two structural nodes: a session of s2 and s3, and a speaker of all
    four segments (a hub)."""
    links = sp.csr_matrix((np.ones(6), ([2, 3, 0, 1, 2, 3], [0, 0, 1, 1, 1, 1])), shape=(4, 2))
    return with_nodes(build_structure(graph), links, np.array([7, 9]))


def test_structure_appends_the_passage_nodes():
    structure = _provenance(_graph())
    assert structure.offsets == (0, 4, 8, 11) and structure.n_nodes == 2
    session, speaker = 11, 12
    adjacency = structure.adjacency
    assert (adjacency != adjacency.T).nnz == 0
    assert sorted(adjacency[session].indices.tolist()) == [4 + 2, 4 + 3]
    assert sorted(adjacency[speaker].indices.tolist()) == [4, 5, 6, 7]
    # entities: the segments that mention them; nodes: those they link to
    assert structure.segment_count.tolist() == [1, 2, 2, 2] + [0] * 7 + [2, 4]
    np.testing.assert_allclose(structure.specificity(np.array([0, 1, 11, 12])), [1, 0.5, 0.5, 0.25])
    core = build_structure(_graph())
    assert (structure.adjacency[:11, :11] != core.adjacency).nnz == 0
    assert (structure.expansion[:11, :11] != core.expansion).nnz == 0


def test_one_hop_subgraph_from_an_entity_seed():
    graph = _graph()
    structure = _provenance(graph)
    sub = query_subgraph(structure, global_nodes(structure, [0], [], []))
    # P's mentions (s0), its fact (f0) and that fact's other end (H); nothing further
    assert sub.entities.tolist() == [0, 1]
    assert sub.segments.tolist() == [0]
    assert sub.facts.tolist() == [0]
    assert sub.nodes.tolist() == []  # nodes hang off segments, not entities
    # induced edges: P-s0, H-s0, P-f0, H-f0, f0-s0 (both directions)
    assert sub.adjacency.nnz == 10 and (sub.adjacency != sub.adjacency.T).nnz == 0


def test_fact_seed_brings_its_ends_and_their_neighbours():
    graph = _graph()
    structure = _provenance(graph)
    sub = query_subgraph(structure, global_nodes(structure, [1, 2], [], [1]))
    assert sub.entities.tolist() == [0, 1, 2, 3]
    assert sub.segments.tolist() == [0, 1, 2]
    assert sub.facts.tolist() == [0, 1, 2]
    assert 3 not in sub.segments  # s3 is two hops away (via X)


def test_a_seed_segment_bridges_through_specific_nodes_only():
    graph = _graph()
    structure = _provenance(graph)
    seed = global_nodes(structure, [], [2], [])

    def segments(cap: int) -> list[int]:
        return query_subgraph(structure, seed, seed, cap).segments.tolist()

    # one hop from s2: its entities R, X, its fact f2, the session and the speaker; no
    # other segment (the paper's one hop) without bridges
    one_hop = query_subgraph(structure, seed, seed, 0)
    assert one_hop.segments.tolist() == [2]
    assert one_hop.entities.tolist() == [2, 3] and one_hop.nodes.tolist() == [0, 1]
    # R and X (2 segments each) and the session (2) bridge to s1 and s3; the speaker (4
    # segments) bridges only when the cap lets a hub through
    assert segments(2) == [1, 2, 3]
    assert segments(1) == [2]
    structure_hub = query_subgraph(structure, seed, seed, 4)
    assert structure_hub.segments.tolist() == [0, 1, 2, 3]
    # the induced edges include the new segments' links to the nodes of G_q
    sub = query_subgraph(structure, seed, seed, 2)
    local_session = sub.size - 2
    assert sorted(sub.adjacency[local_session].indices.tolist()) == [
        len(sub.entities) + 1,
        len(sub.entities) + 2,
    ]


def test_eq1_weights_by_edge_type():
    graph = _graph()
    structure = _provenance(graph)
    sub = query_subgraph(structure, global_nodes(structure, [0], [], []))
    # local order: entities P, H | segment s0 | fact f0
    similarity = np.array([0.7, 0.4, 0.9, 0.2])
    weights = edge_weights(sub, similarity).toarray()
    p, h, s0, f0 = range(4)
    assert weights[p, s0] == weights[s0, p] == pytest.approx(0.7)  # sim(q, entity)
    assert weights[h, s0] == weights[s0, h] == pytest.approx(0.4)
    assert weights[p, f0] == weights[f0, h] == pytest.approx(0.2)  # sim(q, relation)
    assert weights[f0, s0] == weights[s0, f0] == pytest.approx(0.2)
    assert weights[p, h] == 0.0  # the relation runs through its fact node
    assert (edge_weights(sub, np.ones(4)) != sub.adjacency).nnz == 0  # uniform variant


def test_nodes_weigh_their_specificity_times_their_segments_similarity():
    graph = _graph()
    structure = _provenance(graph)
    seed = global_nodes(structure, [], [2], [])
    sub = query_subgraph(structure, seed, seed, 2)
    # local order: entities R, X | segments s1, s2, s3 | fact f2 | session, speaker (the
    # bridged s1 comes without its own entities and facts)
    assert sub.entities.tolist() == [2, 3] and sub.segments.tolist() == [1, 2, 3]
    assert sub.facts.tolist() == [2] and sub.nodes.tolist() == [0, 1]
    raw = np.array([0.6, 0.1, 0.2, 0.8, -0.4, 0.3, 9.0, 9.0])
    similarity = node_similarity(sub, raw)
    np.testing.assert_array_equal(similarity[:6], raw[:6])
    # the session links s2, s3 (mean of 0.8 and -0.4 clamped to 0) and has 2 segments;
    # the speaker links s1, s2, s3 in G_q and 4 segments in all
    assert similarity[6] == pytest.approx(0.5 * 0.4)
    assert similarity[7] == pytest.approx(0.25 * (0.2 + 0.8 + 0.0) / 3)
    weights = edge_weights(sub, similarity).toarray()
    r, s1, s2, s3, f2, session, speaker = 0, 2, 3, 4, 5, 6, 7
    assert weights[s2, session] == weights[session, s3] == pytest.approx(0.2)
    assert weights[s1, speaker] == pytest.approx(similarity[7])
    assert weights[s2, r] == pytest.approx(0.6)  # s2 – R: sim(q, R)
    assert weights[s2, f2] == pytest.approx(0.3)  # s2 – f2: sim(q, f2)
    assert weights[s1, session] == 0.0  # s1 is no turn of the session


def test_paths_chain_a_seed_fact_to_the_segment_it_reaches():
    graph = _graph()
    anchors = anchors_of(graph, seed_entities=set(), seed_facts={0})
    scores = {0: 0.3, 1: 0.2, 2: 0.1}
    assert segment_paths(graph, 1, anchors, {0}, scores, limit=3)[0] == (0, 1)
    assert graph.path_text([0, 1]) == "[P] -[work_at]-> [H] ; [H] -[locate_in]-> [R]"
    assert segment_paths(graph, 0, anchors, {0}, scores, limit=3) == [(0,)]
    assert segment_paths(graph, 3, anchors, {0}, scores, limit=3) == []  # X is out of reach
    # a seed entity reaches its neighbours' segments with no detour through a seed fact
    direct = anchors_of(graph, seed_entities={1}, seed_facts={0})
    assert segment_paths(graph, 1, direct, {0}, scores, limit=1) == [(1,)]


def test_paths_are_those_of_the_loop_over_every_fact(graph_memory):
    """On the sample snapshot's graph, random seeds and subgraph scores: every segment's
    paths are those found visiting every fact of the entities it mentions (as before
    `segment_paths` left out those that end no path)."""
    graph = graph_of(graph_memory._view, QueryContext(PRIYA, 5))
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(30):
        anchors, seed_facts, fact_score = random_ask(graph, rng, 2 / 3)
        for segment in range(len(graph.segment_ids)):
            found = segment_paths(graph, segment, anchors, seed_facts, fact_score, 3)
            assert found == paths_by_every_fact(graph, segment, anchors, seed_facts, fact_score)
            checked += bool(found)
    assert checked > 20  # paths were found, not only empty lists compared


# --- end to end on the sample snapshot ---------------------------------------------------


PRIYA = "Which city is Priya Natarajan's office in?"


def test_two_hops_from_person_to_office_city(graph_memory):
    result = graph_memory.query(PRIYA, strategy="memorai_dwpr", k=8)
    texts = [hit.text for hit in result]
    assert len(texts) == 8
    assert any("Priya Natarajan works at the Harborview Office" in t for t in texts)
    assert any("Harborview Office is located in Rotterdam" in t for t in texts)
    explanation = result.explanation
    seeds = explanation["seeds"]
    assert "Priya Natarajan" in seeds["entities"]
    assert seeds["segments"] and seeds["facts"]
    assert len(seeds["entities"]) <= 3 and len(seeds["facts"]) <= 3
    assert explanation["converged"] and explanation["iterations"] > 1
    assert explanation["subgraph"]["segments"] >= 8
    assert explanation["parameters"]["damping"] == 0.85
    paths = [p for hit in result for p in hit.paths]
    assert any("-[locate_in]-> [Rotterdam]" in p for p in paths)
    scores = [hit.score for hit in result]
    assert scores == sorted(scores, reverse=True)
    json.dumps(result.as_dict())


def test_k_is_respected_and_weights_matter(graph_memory):
    for k in (1, 3):
        assert len(graph_memory.query(PRIYA, strategy="memorai_dwpr", k=k).hits) == k
    dynamic = graph_memory.query(PRIYA, strategy="memorai_dwpr", k=8)
    uniform = graph_memory.query(
        PRIYA, strategy="memorai_dwpr", k=8, options={"uniform_weights": True}
    )
    assert uniform.explanation["parameters"]["edge_weights"] == "uniform"
    assert [h.score for h in uniform] != [h.score for h in dynamic]


def test_the_walk_is_blended_with_the_flat_prior(graph_memory):
    """At flat share 1 the ranking is `hybrid`'s; at 0 it is DW-PR's over the provenance
    subgraph, whose structural nodes (the sample's documents and topics) it walked."""
    k = 6
    flat = [h.segment_id for h in graph_memory.query(PRIYA, strategy="hybrid", k=k)]
    kept = graph_memory.query(PRIYA, strategy="memorai_dwpr", k=k, options={"flat_share": 1.0})
    assert [h.segment_id for h in kept] == flat
    walked = graph_memory.query(PRIYA, strategy="memorai_dwpr", k=k, options={"flat_share": 0.0})
    assert [h.segment_id for h in walked] != flat
    explanation = walked.explanation
    assert explanation["flat_share"] == {"documents": 0.0, "conversations": 0.0}
    assert explanation["subgraph"]["nodes"] > 0 and explanation["top_nodes"]


def test_seed_vector_is_the_prior_mass_of_the_subgraphs_segments():
    graph = _graph()
    structure = _provenance(graph)
    seed = global_nodes(structure, [], [2], [])
    sub = query_subgraph(structure, seed, seed, 2)  # segments s1, s2, s3
    reset = prior_seed(graph, sub, {"s2": 0.6, "s0": 0.3, "s3": 0.1})
    # local order: entities R, X | s1, s2, s3 | f2 | session, speaker; s0 is outside G_q
    np.testing.assert_allclose(reset, [0, 0, 0, 0.6, 0.1, 0, 0, 0])


def test_query_naming_nothing_still_ranks(graph_memory):
    result = graph_memory.query(
        "What is the airspeed velocity of an unladen swallow?", strategy="memorai_dwpr", k=5
    )
    assert 1 <= len(result.hits) <= 5
    assert result.explanation["seeds"]["segments"]


def _binary_by_setdiag(matrix: sp.spmatrix) -> sp.csr_matrix:
    """The structure's former 0/1 pattern: scipy's setdiag(0), then the zeros dropped."""
    binary = sp.csr_matrix(matrix, dtype=np.float64, copy=True)
    binary.setdiag(0)
    binary.eliminate_zeros()
    binary.data[:] = 1.0
    return binary


def test_binary_pattern_equals_the_setdiag_one() -> None:
    """Same entries in the same order as setdiag, on matrices with duplicates that cancel,
    explicit zeros and diagonal entries, in every sparse format."""
    rng = np.random.default_rng(0)
    for _ in range(20):
        n, m = int(rng.integers(1, 60)), int(rng.integers(0, 300))
        values = rng.integers(-2, 3, m).astype(np.float64)
        matrix = sp.coo_matrix((values, (rng.integers(0, n, m), rng.integers(0, n, m))), (n, n))
        for form in (matrix, matrix.tocsr(), matrix.tocsc()):
            expected, got = _binary_by_setdiag(form), binary_pattern(form)
            assert got.shape == expected.shape
            assert np.array_equal(got.indptr, expected.indptr)
            assert np.array_equal(got.indices, expected.indices)
            assert np.array_equal(got.data, expected.data)


def test_node_vectors_are_the_stored_vectors(graph_memory):
    """The segment and entity rows MemORAI scores (read from the graph index's mapped files,
    `transforms.mapped_rows`) are the LanceDB tables' stored vectors at those positions, so
    the node similarities, and the ranking, are those of the table reads they replace."""
    view = graph_memory._view
    graph = graph_of(view, QueryContext(PRIYA, 5))
    positions = np.array([3, 0, len(graph.segment_ids) - 1, 3])
    stored = view.table("segments").to_arrow()
    by_id = dict(
        zip(
            stored.column("segment_id").to_pylist(),
            np.asarray(stored.column("vector").to_pylist(), np.float32),
            strict=True,
        )
    )
    expected = np.stack([by_id[graph.segment_ids[p]] for p in positions])
    np.testing.assert_array_equal(segment_vectors(view, graph, positions), expected)
    entities = view.table("entities").to_arrow()
    vectors = np.asarray(entities.column("vector").to_pylist(), np.float32)
    row = {e: i for i, e in enumerate(entities.column("entity_id").to_pylist())}
    chosen = np.array([2, 0, 2])
    np.testing.assert_array_equal(
        entity_vectors(view, chosen), vectors[[row[graph.entity_ids[i]] for i in chosen]]
    )


def test_graphs_share_the_views_lookups(graph_memory):
    """The id -> position lookups MemORAI's seeds and paths read are made once per view:
    the graphs of two coordinates and the view's `segment_index` share one segment lookup
    (MemORAI's first query built it twice), with the positions of the index's order."""
    view = graph_memory._view
    now = graph_of(view, QueryContext(PRIYA, 5))
    then = graph_of(view, QueryContext(PRIYA, 5, valid_at=datetime(2001, 1, 1, tzinfo=UTC)))
    assert then is not now
    assert now.segment_position is view.segment_index is then.segment_position
    assert now.entity_position is then.entity_position
    assert now.segment_position == {s: i for i, s in enumerate(now.segment_ids)}
    assert now.entity_position == {e: i for i, e in enumerate(now.entity_ids)}
    rows = view.segments.column("segment_id").to_pylist()
    assert all(view.segment_index[s] == i for i, s in enumerate(rows))
    alone = replace(now, names=None)  # a graph made without a view's names
    assert alone.segment_position == now.segment_position
    assert alone.segment_position is not now.segment_position


@pytest.mark.parametrize("text", [PRIYA, "Which city is the office in?", "unladen swallow"])
def test_entity_searches_are_lancedb_search_of_the_entities_table(graph_memory, text):
    """MemORAI's entity seeds and `similar_entities` (both the product with the index's
    unit vectors) give the entities and cosines of LanceDB's search of the entities table,
    which they replace; `similar_entities` leaves out those below its threshold."""
    view = graph_memory._view
    graph = graph_of(view, QueryContext(text, 5))
    hits = view.table("entities").search(view.embed_query(text)).limit(3).to_list()
    by_table = {h["entity_id"]: 1.0 - h["_distance"] / 2.0 for h in hits}
    by_product = similar_entity_positions(view, view.embed_query(text), 3, probes=32)
    assert [graph.entity_ids[e] for e in by_product] == list(by_table)
    np.testing.assert_allclose(list(by_product.values()), list(by_table.values()), atol=1e-4)
    similar = similar_entities(view, text, 3, min_similarity=0.3)
    assert list(similar) == [e for e, c in by_table.items() if c >= 0.3 - 1e-4][: len(similar)]
    assert all(c >= 0.3 for c in similar.values())
    assert similar_entities(view, text, 3, min_similarity=-1.0).keys() == by_table.keys()
