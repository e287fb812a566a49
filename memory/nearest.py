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

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import numpy as np

from memory.fact_columns import SelectedRows
from memory.top import top_positions
from transforms.cpu_lanes import lane_product
from transforms.vector_lists import VectorLists, probe

PROBES = 32
OPTION = "vector_probes"
KEPT_SEARCHES = 4
"""Searches (matrix, lists, probes, query vector) whose scored rows are kept for the next
asks (`_scored`)."""
_KEPT: OrderedDict[tuple[Any, int, int, bytes], tuple[Any, Any, np.ndarray, np.ndarray]] = (
    OrderedDict()
)
"""Key -> (matrix, lists, rows, products): holding the matrix and lists keeps the memory
and ids their keys name from being reused while kept."""
_KEPT_LOCK = threading.Lock()


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
        similarity = _scored(matrix, vector, None, 0)[1]
        top = top_positions(similarity, count)
        return top, similarity[top]
    while True:
        rows, scores = _scored(matrix, vector, lists, probes)
        if len(rows) >= count or probes >= lists.n_lists:
            break
        probes *= 4
    return _best(rows, scores, count)


def _scored(
    matrix: np.ndarray | SelectedRows, vector: np.ndarray, lists: VectorLists | None, probes: int
) -> tuple[np.ndarray, np.ndarray]:
    """(rows, their products with `vector`) that a search reads: every row of the whole
    product without `lists` (rows empty then: the products are indexed by position), else
    the rows of the `probes` lists nearest to `vector` that `matrix` selects. Kept for the
    last `KEPT_SEARCHES` searches: PersonalAI asks for the entities nearest to the question
    twice (the 3 closest, then the linked nodes' count plus 2), each a probe of the same
    lists (~5 ms at 250k entities) or a product of every entity vector."""
    key = (_identity(matrix), id(lists), probes, np.asarray(vector, np.float32).tobytes())
    with _KEPT_LOCK:
        kept = _KEPT.get(key)
        if kept is not None:
            _KEPT.move_to_end(key)
            return kept[2], kept[3]
    if lists is None:
        # SelectedRows multiplies its whole matrix in lanes itself
        plain = not isinstance(matrix, SelectedRows)
        whole = lane_product(matrix, vector) if plain else matrix @ vector
        rows, scores = np.zeros(0, np.int64), np.asarray(whole)
    else:
        rows, scores = probe(lists, vector, probes)
        if isinstance(matrix, SelectedRows) and not matrix.whole:
            at = matrix.within(rows)
            kept_rows = at >= 0
            rows, scores = at[kept_rows], scores[kept_rows]
    with _KEPT_LOCK:
        _KEPT[key] = (matrix, lists, rows, scores)
        while len(_KEPT) > KEPT_SEARCHES:
            _KEPT.popitem(last=False)
    return rows, scores


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


def _identity(matrix: np.ndarray | SelectedRows) -> tuple[int, ...]:
    """What names a matrix's rows: an array's memory (address, shape, strides: views of
    one mapping made by separate `np.asarray` calls are one matrix), another object's id."""
    if isinstance(matrix, np.ndarray):
        return (matrix.__array_interface__["data"][0], *matrix.shape, *matrix.strides)
    return (id(matrix),)
