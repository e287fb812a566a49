"""Dynamic Weighted PageRank (MemORAI §3.3.2, Eq. 2–3) on a sparse weighted graph.

    PR_{t+1}(v) = (1 - d) · seed(v) + d · Σ_{u→v} [w(u→v) / Σ_x w(u→x)] · PR_t(u)

The query-conditioned weights w (Eq. 1) and the seed vector (each node's similarity to the
query) are computed by the caller; this module is the pure iteration, so it can be tested
on hand-built graphs and reused with uniform weights (the paper's "Uniform (w=1)" ablation).

Where the paper is silent:
- negative weights and seeds are clamped to 0 (a cosine below 0 would break the row
  normalisation) and the seed vector is L1-normalised, so scores form a distribution; a
  seed vector with no positive entry becomes uniform;
- the iteration starts from the seed vector ("all nodes ... are initialized with seed(v)");
- a node whose out-weights are all 0 (dangling) hands its mass back along the seed
  vector, so no mass leaks and the scores sum to 1 at every step;
- convergence: L1 change below `tolerance`, at most `max_iterations` steps.

The loop runs scipy's own C product (`_sparsetools.csr_matvec`, what `incoming @ rank`
calls) into a zeroed buffer, with the dangling rows as positions and the constant
(1 - d) · seed computed once: the same operations in the same order, bit for bit, without
scipy's per-call checks and new arrays (a query's subgraph at 1M facts is often a few
hundred nodes, where those made most of the ~25 µs of a step, 100 steps a query).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse import _sparsetools

DAMPING = 0.85
TOLERANCE = 1e-8
MAX_ITERATIONS = 100


@dataclass(frozen=True)
class PageRankResult:
    """Final scores (summing to 1), the number of steps taken, and whether they converged."""

    scores: np.ndarray
    iterations: int
    converged: bool


def row_normalised(weights: sp.spmatrix) -> tuple[sp.csr_matrix, np.ndarray]:
    """Transition matrix w(u→v) / Σ_x w(u→x) (negative weights clamped to 0) and a boolean
    mask of dangling rows (no positive out-weight)."""
    clamped = sp.csr_matrix(weights, dtype=np.float64, copy=True)
    clamped.data = np.maximum(clamped.data, 0.0)
    clamped.eliminate_zeros()
    out = np.asarray(clamped.sum(axis=1)).ravel()
    inverse = np.divide(1.0, out, out=np.zeros_like(out), where=out > 0)
    return (sp.diags(inverse) @ clamped).tocsr(), out <= 0


def seed_distribution(seed: np.ndarray) -> np.ndarray:
    """Seed similarities clamped to 0 and L1-normalised (uniform if none is positive)."""
    positive = np.maximum(np.asarray(seed, dtype=np.float64), 0.0)
    total = positive.sum()
    if total <= 0:
        return np.full(len(positive), 1.0 / max(len(positive), 1))
    return positive / total


def dynamic_weighted_pagerank(
    weights: sp.spmatrix,
    seed: np.ndarray,
    damping: float = DAMPING,
    tolerance: float = TOLERANCE,
    max_iterations: int = MAX_ITERATIONS,
) -> PageRankResult:
    """Power iteration of Eq. 2–3 for the directed weights `weights[u, v] = w(u→v)`."""
    n = weights.shape[0]
    if weights.shape != (n, n) or len(seed) != n:
        raise ValueError(f"weights {weights.shape} and seed ({len(seed)}) must be n x n and n")
    if not 0.0 <= damping < 1.0:
        raise ValueError(f"damping must be in [0, 1), got {damping}")
    if n == 0:
        return PageRankResult(np.zeros(0), 0, True)
    transition, dangling = row_normalised(weights)
    incoming = transition.T.tocsr()
    sinks = np.flatnonzero(dangling)
    p = seed_distribution(seed)
    restart = (1.0 - damping) * p
    rank = p.copy()
    spread = np.empty(n)
    for step in range(1, max_iterations + 1):
        spread.fill(0.0)
        _sparsetools.csr_matvec(
            n, n, incoming.indptr, incoming.indices, incoming.data, rank, spread
        )
        spread += rank[sinks].sum() * p
        updated = restart + damping * spread
        change = float(np.abs(updated - rank).sum())
        rank = updated
        if change < tolerance:
            return PageRankResult(rank, step, True)
    return PageRankResult(rank, max_iterations, False)
