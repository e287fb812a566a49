"""The message-passing operator of an R-GCN layer without learned weights: per node, the
mean over each relation's neighbours, summed over relations (Schlichtkrull et al. 2018,
KGERMAR eq. 5 with every W_r and W_0 the identity).

    h_i' = h_i + sum_r sum_{j in N_i^r} (1 / |N_i^r|) h_j   =   ((I + M) h)_i

`relational_mean` returns M for a typed edge list, so a layer is `h + M @ h` for any
feature matrix or vector h. Being linear, the layers commute with a product by a query
vector q: q . h^(L)_i equals the same layers applied to the scores q . h^(0) (KGERMAR's
cosine against structural embeddings, computed from the query's similarities to the
nodes' text vectors instead of from stored embeddings).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def relational_mean(
    n: int, target: np.ndarray, source: np.ndarray, relation: np.ndarray
) -> sp.csr_matrix:
    """The n x n matrix M with M[i, j] = (edges j -> i of relation r) / |N_i^r| summed over
    relations r, for the edges source[e] -> target[e] of type relation[e] (int arrays of
    one length). |N_i^r| counts the edges of type r into i; an edge listed twice counts
    twice, so a neighbour's share is its multiplicity over the relation's total. Undirected
    relations (the paper's N_i^r holds incoming and outgoing neighbours alike) are given as
    both directions."""
    target = np.asarray(target, np.int64)
    source = np.asarray(source, np.int64)
    relation = np.asarray(relation, np.int64)
    if not len(target):
        return sp.csr_matrix((n, n))
    groups = target * (int(relation.max()) + 1) + relation
    _, group, counts = np.unique(groups, return_inverse=True, return_counts=True)
    weights = 1.0 / counts[group]
    return sp.csr_matrix((weights, (target, source)), shape=(n, n))
