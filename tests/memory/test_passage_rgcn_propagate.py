"""`PassageRGCN.propagate` against a step-by-step reference: each layer spreads into a copy
of h from the sorted set of the positions reached so far, merged with the layer's reach
as sorted sets. The in-place layers and the mask of reached positions must give the same
segments in the same order and the same scores, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from memory.csr import add_rows
from memory.passage_rgcn import PassageRGCN


def _reference(
    rgcn: PassageRGCN, seeds: np.ndarray, values: np.ndarray, layers: int, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    x = np.zeros(rgcn.spread.shape[0])
    x[seeds] = values
    active = np.unique(seeds)
    for _ in range(layers):
        nxt = x.copy()
        spreading = active[x[active] >= threshold] if threshold > 0 else active
        reached = add_rows(rgcn.spread, spreading, x[spreading], nxt)
        x = nxt
        active = np.union1d(active, reached)
    segments = active[active < rgcn.n_segments]
    return segments, x[segments]


def _operator(rng: np.random.Generator, size: int, n_segments: int) -> PassageRGCN:
    spread = sp.random(size, size, density=0.02, random_state=rng, format="csr")
    spread.data = rng.uniform(0.01, 0.5, len(spread.data))
    spread.indptr = spread.indptr.astype(np.int64)
    spread.indices = spread.indices.astype(np.int64)
    return PassageRGCN(n_segments, {}, spread)


@pytest.mark.parametrize("layers", [0, 1, 2, 3])
@pytest.mark.parametrize("threshold", [0.0, 1e-3, 0.05, 2.0])
def test_propagate_equals_the_set_merging_layers(layers: int, threshold: float) -> None:
    rng = np.random.default_rng(layers * 10 + int(threshold * 1000))
    rgcn = _operator(rng, 400, 250)
    for count in (1, 5, 40):
        seeds = rng.choice(400, count, replace=False)  # distinct, not sorted
        values = rng.uniform(1e-4, 1.0, count)
        want = _reference(rgcn, seeds, values, layers, threshold)
        reached, scores = rgcn.propagate(seeds, values, layers, threshold)
        assert reached.tolist() == want[0].tolist()
        assert scores.tobytes() == want[1].tobytes()
