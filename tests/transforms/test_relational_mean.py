"""The R-GCN aggregation without learned weights: a mean per relation, summed over
relations, and layers that commute with a product by a query vector."""

from __future__ import annotations

import numpy as np
import pytest

from transforms.relational_mean import relational_mean


def test_each_relation_is_averaged_on_its_own() -> None:
    # node 0 hears from 1 and 2 by relation 0 and from 3 by relation 1
    mean = relational_mean(4, np.array([0, 0, 0]), np.array([1, 2, 3]), np.array([0, 0, 1]))
    assert mean.toarray()[0].tolist() == [0.0, 0.5, 0.5, 1.0]
    assert mean[1:].nnz == 0  # no edge into the other nodes


def test_a_repeated_edge_weighs_its_multiplicity() -> None:
    mean = relational_mean(3, np.array([0, 0, 0]), np.array([1, 1, 2]), np.array([4, 4, 4]))
    assert mean.toarray()[0] == pytest.approx([0.0, 2 / 3, 1 / 3])


def test_no_edges_give_an_empty_operator() -> None:
    empty = np.zeros(0, np.int64)
    assert relational_mean(5, empty, empty, empty).shape == (5, 5)


def test_layers_commute_with_the_query_product() -> None:
    """q . h^(L) of the layers h <- h + M h over features H equals the layers applied to
    the scores H q: the structural bank's cosine computed without stored embeddings."""
    rng = np.random.default_rng(3)
    n, edges = 30, 90
    target, source = rng.integers(0, n, edges), rng.integers(0, n, edges)
    mean = relational_mean(n, target, source, rng.integers(0, 4, edges))
    features, query = rng.normal(size=(n, 8)), rng.normal(size=8)
    h, x = features, features @ query
    for _ in range(2):
        h, x = h + mean @ h, x + mean @ x
    np.testing.assert_allclose(h @ query, x, rtol=1e-10, atol=1e-12)
