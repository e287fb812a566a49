"""The rows of a vector matrix nearest to a query vector, by the exact product of every
row or, where the snapshot's graph index holds an IVF index of the matrix
(`transforms.vector_lists`), by re-scoring the rows of the lists nearest to the query.

A query's option `vector_probes` sets how many lists are probed; 0 multiplies every row
(the exact path, one setting away). Matrices below `transforms.vector_lists.EXACT_BELOW`
rows have no IVF index and are always multiplied whole.

`PROBES` = 32 lists. Measured (top-k overlap with the whole product):
- real MiniLM vectors (34,735 passage vectors of the dev sets' embedding cache, 186 lists,
  the 100 MuSiQue questions as queries): 8 probes 0.80 / 0.80 / 0.78 at k = 3 / 5 / 10,
  16 probes 0.87 / 0.88 / 0.87, 32 probes 0.95 / 0.95 / 0.94;
- the synthetic benchmark's vectors, seeded random unit vectors with no neighbourhoods to
  find (the worst case: overlap ~ the share of rows read), 32 probes: 0.25 at 100k facts
  (316 lists), 0.12-0.14 at 1M (1,000 lists) and 0.16-0.26 over its 250k entities.
A probe of 32 lists re-scores 32 sqrt(n) rows: 3.2% of them at 1M facts, in ~7 ms against
~300 ms for the whole product (one core, memory-mapped, warm).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from memory.fact_columns import SelectedRows
from memory.top import top_positions
from transforms.vector_lists import VectorLists, probe

PROBES = 32
OPTION = "vector_probes"


def probes_of(options: Mapping[str, Any]) -> int:
    """Lists probed per search under a query's options (0: the exact product)."""
    return int(options.get(OPTION, PROBES))


def nearest_rows(
    matrix: np.ndarray | SelectedRows,
    vector: np.ndarray,
    count: int,
    lists: VectorLists | None,
    probes: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the `count` rows of `matrix` with the largest product with `vector`,
    largest first, ties by position, and those products.

    `lists` indexes the matrix the rows come from: `matrix` itself, or the one a
    `SelectedRows` selects from (positions are then within the selection, and rows the
    selection leaves out are skipped). Without `lists`, or with `probes` <= 0, every row
    is multiplied (`top_positions` of the whole product). Otherwise the `probes` nearest
    lists are re-scored exactly, more lists (four times as many) while they hold fewer
    than `count` selected rows; probing every list scores every row."""
    if lists is None or probes <= 0:
        similarity = matrix @ vector
        top = top_positions(similarity, count)
        return top, similarity[top]
    selection = matrix if isinstance(matrix, SelectedRows) and not matrix.whole else None
    while True:
        rows, scores = probe(lists, vector, probes)
        if selection is not None:
            at = selection.within(rows)
            kept = at >= 0
            rows, scores = at[kept], scores[kept]
        if len(rows) >= count or probes >= lists.n_lists:
            break
        probes *= 4
    return _best(rows, scores, count)


def _best(rows: np.ndarray, scores: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The `count` (row, score) pairs of largest score, largest first, ties by row: what
    `top_positions` gives over rows in ascending order, for rows in any order."""
    if count <= 0 or not len(rows):
        return rows[:0], scores[:0]
    if count < len(scores):
        kth = np.partition(scores, len(scores) - count)[len(scores) - count]
        head = np.flatnonzero(scores >= kth)
        rows, scores = rows[head], scores[head]
    order = np.lexsort((rows, -scores))[:count]
    return rows[order], scores[order]
