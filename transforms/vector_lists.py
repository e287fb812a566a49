"""A partitioned (IVF-style) index of a matrix of normalised vectors, computed at build
time, so that a query's nearest rows are found by re-scoring a few lists exactly instead
of multiplying every row.

The rows are split into about sqrt(n) lists by spherical k-means (centroids of unit
length, rows assigned to the centroid of largest inner product, the cosine for
normalised rows). The index holds the centroids, the row positions grouped by list (a
permutation, with each list's offsets) and a copy of the rows in that grouped order, so
a list is one contiguous slice of a memory-mapped file: probing reads the probed lists
and nothing else. A query probes the lists whose centroids are nearest to its vector and
re-scores their rows exactly (`probe`); the approximation is only in which rows are
looked at, and probing every list looks at all of them.

Choices (no paper behind this index; the measured reasons):
- `EXACT_BELOW` = 50,000 rows: below it no index is built and a query multiplies every
  row, as before. The product reads every row (77 MB at 50k x 384 float32), so its cost is
  proportional to the rows: measured at ~300 ms per query over the 1M statement vectors on
  the shared 2-core machine, a twentieth of that at 50k, while a probe has a fixed part
  (centroids, gathering, ~2-3 ms) and returns near, not exact, neighbours. So a small
  matrix keeps exact rankings at a small cost, and both dev sets (at most 9,476 entities
  and 1,078 facts) rank exactly as before; the 100k benchmark's 25k entities also stay
  exact, its 100k facts get an index.
- sqrt(n) lists (1,000 at 1M), the customary IVF size: a probe then re-scores
  `probes` x sqrt(n) rows and the centroid product costs sqrt(n) rows.
- Training on a random sample of `SAMPLE_PER_LIST` (64) rows per list, `ITERATIONS` (8)
  Lloyd iterations from `SEED`-chosen distinct sample rows, then one assignment pass over
  all rows: the customary IVF training size (FAISS asks for 39-256 points per list), which
  bounds the k-means to 64k rows at 1M. Building the 1M-fact and 250k-entity indexes took
  89 s wall (25 s CPU) on the shared machine. A list left empty keeps its previous
  centroid. Deterministic: the same rows give the same index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from transforms.mapped_rows import span_products

EXACT_BELOW = 50_000
SAMPLE_PER_LIST = 64
ITERATIONS = 8
SEED = 0
CHUNK = 16_384
"""Rows assigned or copied at a time (bounds the temporary score matrix)."""


@dataclass(frozen=True)
class VectorLists:
    """An IVF index of one n x dim matrix (arrays may be memory-mapped)."""

    centroids: np.ndarray
    """n_lists x dim, unit rows."""
    offsets: np.ndarray
    """n_lists + 1: list i holds grouped rows offsets[i]:offsets[i + 1]."""
    order: np.ndarray
    """n: the matrix position of each grouped row (a permutation of 0..n-1)."""
    vectors: np.ndarray
    """n x dim: the matrix's rows in `order` (row j is matrix row order[j])."""

    @property
    def n_lists(self) -> int:
        return len(self.centroids)


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """`vectors` with every nonzero row scaled to length 1 (zero rows stay zero), float32.
    The graph index stores the entities' so (`GraphIndex.entity_unit_vectors`): at 250k
    entities the norms and the scaled copy took 1.1-1.4 s of a query process's first
    query and 384 MB of its memory, in REAL and in PersonalAI each."""
    vectors = np.asarray(vectors, np.float32)
    if not len(vectors):
        return vectors.reshape(0, vectors.shape[1] if vectors.ndim == 2 else 0)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)


def build_vector_lists(
    vectors: np.ndarray, exact_below: int = EXACT_BELOW, seed: int = SEED
) -> VectorLists | None:
    """The IVF index of `vectors` (n x dim, rows normalised); None below `exact_below`
    rows or for vectors of no dimension, where a query multiplies every row."""
    n = len(vectors)
    if n < max(exact_below, 1) or vectors.ndim != 2 or vectors.shape[1] == 0:
        return None
    n_lists = max(1, round(math.sqrt(n)))
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(n, size=min(n, SAMPLE_PER_LIST * n_lists), replace=False))
    centroids = _kmeans(np.asarray(vectors[sample], np.float32), n_lists, rng)
    assignment = np.concatenate(
        [_nearest(np.asarray(vectors[s : s + CHUNK]), centroids) for s in range(0, n, CHUNK)]
    )
    order = np.argsort(assignment, kind="stable")
    offsets = np.zeros(n_lists + 1, np.int64)
    offsets[1:] = np.cumsum(np.bincount(assignment, minlength=n_lists))
    grouped = np.empty((n, vectors.shape[1]), np.float32)
    for start in range(0, n, CHUNK):
        grouped[start : start + CHUNK] = vectors[order[start : start + CHUNK]]
    return VectorLists(centroids, offsets, order.astype(np.int64), grouped)


def probe(lists: VectorLists, vector: np.ndarray, probes: int) -> tuple[np.ndarray, np.ndarray]:
    """(matrix positions, exact scores `row @ vector`) of every row in the `probes` lists
    whose centroids are nearest to `vector`, list by list (not sorted: a sort of the 32k
    rows of a probe at 1M would cost a fifth of the probe)."""
    probes = min(max(probes, 1), lists.n_lists)
    closeness = lists.centroids @ vector
    near = (
        np.arange(lists.n_lists)
        if probes >= lists.n_lists
        else np.argpartition(-closeness, probes - 1)[:probes]
    )
    near = np.sort(near)
    starts, ends = lists.offsets[near], lists.offsets[near + 1]
    positions = np.concatenate(
        [np.zeros(0, np.int64), *(lists.order[s:e] for s, e in zip(starts, ends, strict=True))]
    )
    # multiplied through the mapping, each list's pages handed back after (`mapped_rows`)
    scores = span_products(lists.vectors, starts, ends, vector)
    return positions, scores


def _kmeans(sample: np.ndarray, n_lists: int, rng: np.random.Generator) -> np.ndarray:
    """Spherical k-means of `sample`: `n_lists` unit centroids after `ITERATIONS` rounds."""
    n_lists = min(n_lists, len(sample))
    centroids = unit_rows(sample[np.sort(rng.choice(len(sample), n_lists, replace=False))])
    for _ in range(ITERATIONS):
        assignment = _nearest(sample, centroids)
        members = sp.csr_matrix(
            (np.ones(len(sample), np.float32), (assignment, np.arange(len(sample)))),
            shape=(n_lists, len(sample)),
        )
        sums = np.asarray(members @ sample, np.float32)
        filled = np.diff(members.indptr) > 0
        centroids[filled] = unit_rows(sums[filled])
    return centroids


def _nearest(rows: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """The centroid of largest inner product of each row (ties to the first)."""
    assignment = np.empty(len(rows), np.int64)
    for start in range(0, len(rows), CHUNK):
        assignment[start : start + CHUNK] = np.argmax(rows[start : start + CHUNK] @ centroids.T, 1)
    return assignment
