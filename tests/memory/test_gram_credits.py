"""GRAM's credits, made for the groups of one length and kind at once and the segments
stating typed facts read for every chunk at once (`_Credits._collect`), are those made
chunk by chunk: the same segments and path rows in the same order, the same masses."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp

from memory.csr import row_entries
from memory.link_graph import FACT
from memory.relational_paths import PathArrays, Search
from memory.strategies.gram_paths import _Credits


def _reference(credits: _Credits, searches: list[tuple[Search, bool]]) -> list[np.ndarray]:
    """Each chunk's (segments, paths) as `add` made them search by search, group by group."""
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


def test_credits_made_at_once_equal_those_made_per_chunk() -> None:
    rng = np.random.default_rng(11)
    n_nodes, n_segments, n_edges, n_facts = 30, 40, 200, 60
    fact_segments = sp.random(n_facts, n_segments, density=0.08, random_state=rng, format="csr")
    edges = SimpleNamespace(
        n_nodes=n_nodes,
        kind=np.where(rng.random(n_edges) < 0.5, FACT, FACT + 1),
        ref=rng.integers(0, n_facts, n_edges),
        steps=lambda vertices, facts: 1.0 / (2 + (vertices * 7 + facts) % 5),
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
    weights = [(float(rng.random()), float(rng.random()) if i % 3 else 0.0) for i in range(6)]
    for (search, every_segment), (start, end) in zip(searches, weights, strict=True):
        credits.add(search, start, end if every_segment else 0.0, every_segment)
    segments, paths, masses = credits._collect()
    want = _reference(credits, searches)
    assert segments.tolist() == np.concatenate(want[0::2]).tolist()
    assert paths.tolist() == np.concatenate(want[1::2]).tolist()
    want_masses = [
        search.masses(edges.steps, start, end if every_segment else 0.0)
        for (search, every_segment), (start, end) in zip(searches, weights, strict=True)
    ]
    assert masses.tolist() == np.concatenate(want_masses).tolist()
