"""Sparse structures over a selection of a snapshot's facts, shared by the build (which
stores those of the default query coordinates in the graph index) and the query process
(which builds them for any other coordinates): one formula each, so the mapped structure
and the one built at query time are the same matrix, entry for entry.

A selection is the facts of one query coordinate whose both ends are entities, given by
their head and tail entity positions, confidence and supporting segments
(`memory.graph.MemoryGraph` holds the same arrays)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def entity_fact_incidence(head: np.ndarray, tail: np.ndarray, n_entities: int) -> sp.csr_matrix:
    """n_entities x n_facts: +1 where the entity is the fact's head, -1 where its tail (a
    fact from an entity to itself sums to 0)."""
    n_f = len(head)
    fact_index = np.arange(n_f)
    return sp.coo_matrix(
        (
            np.concatenate([np.ones(n_f), -np.ones(n_f)]),
            (np.concatenate([head, tail]), np.concatenate([fact_index, fact_index])),
        ),
        shape=(n_entities, n_f),
    ).tocsr()


def entity_adjacency(
    head: np.ndarray, tail: np.ndarray, confidence: np.ndarray, n_entities: int
) -> sp.csr_matrix:
    """Symmetric entity x entity matrix; weight = summed confidence of the facts between."""
    upper = sp.coo_matrix((confidence, (head, tail)), shape=(n_entities, n_entities)).tocsr()
    return (upper + upper.T).tocsr()


def memorai_structure(
    mentions: sp.csr_matrix,
    entity_facts: sp.csr_matrix,
    fact_segments: sp.csr_matrix,
    adjacency_of_entities: sp.csr_matrix,
) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """MemORAI's unweighted edges over [entities | segments | facts] (`mentions`: segments
    x entities; `entity_facts`: `entity_fact_incidence`; `fact_segments`: facts x
    segments; `adjacency_of_entities`: `entity_adjacency`): the adjacency (mentions,
    fact ends, support) and the expansion (the adjacency plus entity–entity through one
    fact), both symmetric 0/1 without a diagonal (`memory.memorai_subgraph`)."""
    entity_segment = mentions.T.tocsr().astype(np.float64)
    entity_fact = abs(entity_facts).astype(np.float64)
    segment_fact = fact_segments.T.tocsr().astype(np.float64)
    adjacency = binary_pattern(
        sp.bmat(
            [
                [None, entity_segment, entity_fact],
                [entity_segment.T, None, segment_fact],
                [entity_fact.T, segment_fact.T, None],
            ],
            format="csr",
        )
    )
    n_e = entity_facts.shape[0]
    related = sp.block_diag(
        [binary_pattern(adjacency_of_entities), sp.csr_matrix((adjacency.shape[0] - n_e,) * 2)]
    )
    return adjacency, binary_pattern(adjacency + related)


def binary_pattern(matrix: sp.spmatrix) -> sp.csr_matrix:
    """1 where `matrix` has a nonzero entry off the diagonal: the stored entries are
    masked in place of scipy's `setdiag(0)`, which goes through COO and took 8 of the 12 s
    of the structure at 1M facts."""
    source = sp.csr_matrix(matrix)
    source.sum_duplicates()
    rows = np.repeat(np.arange(source.shape[0]), np.diff(source.indptr))
    kept = (source.indices != rows) & (source.data != 0)
    indptr = np.zeros(source.shape[0] + 1, np.int64)
    np.cumsum(np.bincount(rows[kept], minlength=source.shape[0]), out=indptr[1:])
    indices = source.indices[kept]
    return sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=source.shape)
