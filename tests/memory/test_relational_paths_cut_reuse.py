"""A search of shared path trees taken from the tree's search with neither stop nor
avoided entity (`relational_paths._Cut`: its rows as they are, or narrowed where it was
not truncated) selects the rows that the search selects on its own from a fresh tree."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from memory import relational_paths as fast
from tests.memory.test_relational_paths_differential import _random_graph


@pytest.mark.parametrize("seed", range(4))
def test_cut_rows_from_the_unbounded_cut_equal_those_selected_alone(seed: int) -> None:
    graph = _random_graph(seed)
    routes: Counter[str] = Counter()
    for depth, limit in itertools.product([1, 2, 3], [5, 40, 10_000]):
        trees = fast.PathTrees(graph)
        for start, other in itertools.product(range(8), range(12)):
            if start == other:
                continue
            for stop_at, avoid in [(other, None), (None, other), (None, None)]:
                tree = trees.tree(start)
                got = fast._cut_rows(tree, depth, stop_at, avoid, limit)
                base = tree.cuts[(depth, limit)]
                if base is not None:
                    held = base.holds(stop_at, avoid)
                    routes["held" if held else "full" if base.truncated else "narrowed"] += 1
                fresh = fast._Tree(graph, [tree.levels[0]])
                alone = fast._cut_rows_grown(fresh, depth, stop_at, avoid, limit)
                if alone is None or got is None:
                    continue
                assert got[1] == alone[1]
                assert len(got[0]) == len(alone[0])
                for d, (mine, theirs) in enumerate(zip(got[0], alone[0], strict=True)):
                    assert tree.levels[d].entities[mine].tolist() == (
                        fresh.levels[d].entities[theirs].tolist()
                    )
                    assert tree.levels[d].facts[mine].tolist() == (
                        fresh.levels[d].facts[theirs].tolist()
                    )
    assert routes["held"] and routes["narrowed"] and routes["full"], routes
