"""MemORAI's shortcuts give what the plain forms give: the nodes' surrogate similarity read
from the node rows' CSR arrays equals the scipy selections' sum and product bit for bit,
and the paths a widened ask reads from the kept traversal are those found afresh."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import scipy.sparse as sp

from memory.memorai_subgraph import QuerySubgraph, induced, node_similarity
from memory.snapshot_view import QueryContext
from memory.strategies.memorai_dwpr import memorai_dwpr


def _reference(subgraph: QuerySubgraph, similarity: np.ndarray) -> np.ndarray:
    result = np.array(similarity, dtype=np.float64)
    kinds = subgraph.kinds
    nodes, segments = np.flatnonzero(kinds == 3), np.flatnonzero(kinds == 1)
    links = subgraph.adjacency[nodes][:, segments]
    linked = np.asarray(links.sum(axis=1)).ravel()
    total = links @ np.maximum(result[segments], 0.0)
    mean = np.divide(total, linked, out=np.zeros(len(nodes)), where=linked > 0)
    result[nodes] = subgraph.specificity[nodes] * mean
    return result


def test_node_similarity_equals_the_scipy_selections() -> None:
    rng = np.random.default_rng(3)
    for counts in ((5, 20, 7, 6), (0, 12, 0, 3), (4, 9, 3, 0), (30, 80, 40, 25)):
        size = sum(counts)
        kinds = np.repeat(np.arange(4), counts)
        dense = rng.random((size, size)) < 0.15
        dense &= ~((kinds[:, None] % 3 == 0) & (kinds[None, :] % 3 == 0))  # no entity/node pairs
        dense = np.triu(dense, 1)
        dense = dense | dense.T
        weights = np.where(dense, rng.choice([1.0, 0.5, 2.0], (size, size)), 0.0)
        weights = np.triu(weights) + np.triu(weights, 1).T
        mirrored = (kinds == 0) | (kinds == 3)
        matrix = sp.csr_matrix(weights)
        starts = np.cumsum((0, *counts))
        subgraph = QuerySubgraph(
            entities=np.arange(counts[0]),
            segments=np.arange(counts[1]),
            facts=np.arange(counts[2]),
            nodes=np.arange(counts[3]),
            adjacency=induced(matrix, np.arange(size), mirrored),
            specificity=np.where(mirrored, 1.0 / rng.integers(1, 9, size), 1.0),
        )
        assert starts[-1] == subgraph.size
        similarity = rng.uniform(-0.3, 1.0, size)
        want = _reference(subgraph, similarity)
        assert node_similarity(subgraph, similarity).tobytes() == want.tobytes()


def test_a_widened_ask_lists_the_paths_found_afresh(graph_memory) -> None:
    view = graph_memory._view
    for text in ("Where does Priya Natarajan work?", "Who succeeded Eleanor Whitfield?"):
        first = memorai_dwpr(view, QueryContext(text, 2, depth=2))
        widened = memorai_dwpr(view, QueryContext(text, 5, depth=2))
        view.cache["graph_work"] = OrderedDict()
        fresh = memorai_dwpr(view, QueryContext(text, 5, depth=2))
        assert widened.scored == fresh.scored and widened.paths == fresh.paths
        assert widened.scored[:2] == first.scored
        assert {s: p for s, p in fresh.paths.items() if s in dict(first.scored)} == first.paths
