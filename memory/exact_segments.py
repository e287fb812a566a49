"""The exact vector search of the segments, from the graph index, where LanceDB would scan.

A segments table below `stores.lance_tables.VECTOR_INDEX_MIN_ROWS` rows has no vector
index, so LanceDB answers a vector search by reading and scoring every row from its
files: 65-76 ms a query over the 40k segments of the 100k-fact bench (prefiltered to the
retrievable kinds), four times its IVF search over the 403k segments at 1M facts. The
snapshot's graph index holds the same vectors, row for row (`segment_vectors`, copied
from the pinned table), mapped; their product with the query is the same exact search in
a few milliseconds.

The distance is LanceDB's squared L2, |x|² - 2 x·q + |q|², with each row's |x|² computed
once per view: equal to the distance LanceDB reports up to float32 rounding, so the
scores, rounded to 6 decimals as before, may differ from LanceDB's in the last digit, and
two segments at a near-tie may come in the other order. Ties go by row. The product runs
on one OpenBLAS thread, its rows cut in fixed blocks run side by side where the query
may (`transforms.cpu_lanes.lane_product`: the pool's spinning threads took the next
query's core; on one thread alone the product took 2.1 ms a query at 100k facts, against
1.5 ms on the pool). A table with a
vector index keeps LanceDB's search (approximate, through the index), as does the second
encoder's column, which the index does not hold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.top import top_positions
from transforms.cpu_lanes import lane_product


@dataclass(frozen=True)
class ExactSegments:
    """The retrievable segments' vectors, for exact nearest-neighbour searches (and any
    rows held the same way: KGERMAR's structure table, its entity ids as the ids)."""

    ids: list[str]
    """Id of each row of `vectors`."""
    vectors: np.ndarray
    """float32, a row per segment (mapped)."""
    norms: np.ndarray
    """Each row's squared length (float32)."""
    retrievable: np.ndarray | None
    """Positions of the rows a search may return; None: every row."""

    @classmethod
    def of(
        cls, ids: list[str], vectors: np.ndarray, retrievable: np.ndarray | None
    ) -> ExactSegments:
        """The search over `vectors` (rows in `ids` order), restricted to the rows
        `retrievable` (positions, ascending; None: all)."""
        norms = np.einsum("ij,ij->i", vectors, vectors)
        return cls(ids, vectors, norms, retrievable)

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The `k` segments nearest to `vector` by squared L2 distance, (segment id, cosine
        1 - d/2 rounded to 6 decimals), nearest first, ties by row."""
        query = np.asarray(vector, np.float32)
        products = lane_product(self.vectors, query)
        distance = self.norms - np.float32(2.0) * products + np.float32(query @ query)
        rows = self.retrievable
        if rows is not None:
            distance = distance[rows]
        top = top_positions(-distance, k)
        found = top if rows is None else rows[top]
        return [
            (self.ids[int(row)], round(1.0 - float(d) / 2.0, 6))
            for row, d in zip(found, distance[top], strict=True)
        ]
