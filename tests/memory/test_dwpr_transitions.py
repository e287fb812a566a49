"""`dwpr.incoming_transitions` against the scipy matrices it stands in for, bit for bit."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from memory.dwpr import incoming_transitions


def _reference(weights: sp.spmatrix) -> tuple[sp.csr_matrix, np.ndarray]:
    """The transposed transition matrix as scipy's matrix steps build it."""
    clamped = sp.csr_matrix(weights, dtype=np.float64, copy=True)
    clamped.sum_duplicates()
    clamped.data = np.maximum(clamped.data, 0.0)
    clamped.eliminate_zeros()
    out = np.asarray(clamped.sum(axis=1)).ravel()
    inverse = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    return (sp.diags(inverse) @ clamped).tocsr().T.tocsr(), out <= 0


def test_incoming_transitions_equal_scipy_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    for size in (1, 5, 40, 300):
        dense = rng.normal(size=(size, size)) * (rng.random((size, size)) < 0.1)
        dense[rng.random(size) < 0.2] = 0.0  # dangling rows
        for matrix in (sp.csr_matrix(dense), sp.coo_matrix(dense), sp.csr_matrix(-dense)):
            incoming, dangling = incoming_transitions(matrix)
            expected, expected_dangling = _reference(matrix)
            assert np.array_equal(dangling, expected_dangling)
            assert np.array_equal(incoming.indptr, expected.indptr)
            assert np.array_equal(incoming.indices, expected.indices)
            assert np.array_equal(incoming.data, expected.data)  # exact, not close


def test_incoming_transitions_sum_duplicates() -> None:
    rows, cols = np.array([0, 0, 1, 1]), np.array([1, 1, 0, 2])
    matrix = sp.coo_matrix((np.array([0.25, 0.5, 2.0, -1.0]), (rows, cols)), shape=(3, 3))
    incoming, dangling = incoming_transitions(matrix)
    assert incoming.toarray()[1, 0] == 1.0 and incoming.toarray()[0, 1] == 1.0
    assert dangling.tolist() == [False, False, True]
