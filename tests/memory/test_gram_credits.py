"""GRAM's credits to the segments stating typed facts, read for every chunk at once
(`_Credits._state`), are those read chunk by chunk: the same segments and path rows in the
same order."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp

from memory.csr import row_entries
from memory.link_graph import FACT
from memory.relational_paths import PathArrays, Search
from memory.strategies.gram_paths import _Credits


def _reference(credits: _Credits, searches: list[tuple[Search, bool]]) -> list[np.ndarray]:
    """Each chunk's (segments, paths) as `add` made them before the batched read."""
    edges, graph, n = credits.edges, credits.graph, credits.edges.n_nodes
    chunks: list[np.ndarray] = []
    offset = 0
    for search, every_segment in searches:
        for group in search.groups:
            steps, paths = group.facts.shape[1], len(group)
            width = steps + 1 if every_segment else 1
            at = group.entities[:, -width:].T.ravel()
            on = np.flatnonzero(at >= n)
            chunks += [at[on] - n, offset + on % paths]
            width = steps if every_segment else 1
            facts = group.facts[:, -width:].T.ravel()
            typed = np.flatnonzero(edges.kind[facts] == FACT)
            if len(typed):
                stated, _, counts = row_entries(graph.fact_segments, edges.ref[facts[typed]])
                chunks += [np.asarray(stated, np.int64), np.repeat(offset + typed % paths, counts)]
            offset += paths
    return chunks


def test_stated_credits_read_at_once_equal_those_read_per_chunk() -> None:
    rng = np.random.default_rng(11)
    n_nodes, n_segments, n_edges, n_facts = 30, 40, 200, 60
    fact_segments = sp.random(n_facts, n_segments, density=0.08, random_state=rng, format="csr")
    edges = SimpleNamespace(
        n_nodes=n_nodes,
        kind=np.where(rng.random(n_edges) < 0.5, FACT, FACT + 1),
        ref=rng.integers(0, n_facts, n_edges),
        steps=lambda vertices, facts: np.full(facts.shape, 0.5),
    )
    credits = _Credits(SimpleNamespace(fact_segments=fact_segments), edges)  # type: ignore[arg-type]
    searches = []
    for index in range(6):
        groups = []
        for length in (1, 2, 3):
            rows = int(rng.integers(1, 12))
            entities = rng.integers(0, n_nodes + n_segments, (rows, length + 1))
            groups.append(PathArrays(entities, rng.integers(0, n_edges, (rows, length))))
        searches.append((Search(groups), index % 2 == 0))
    for search, every_segment in searches:
        credits.add(search, 1.0, 0.5 if every_segment else 0.0, every_segment)
    credits._state()
    want = _reference(credits, searches)
    got = [part for pair in zip(credits.segments, credits.paths, strict=True) for part in pair]
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.tolist() == b.tolist()
