"""KGERMAR's ranking follows the k first asked (`QueryContext.depth`), not the fetch
`Memory.query` widens: the widened ask's first k hits are the first ask's, read from the
ranking kept for the query, and a query first asked with another k is ranked anew."""

from __future__ import annotations

from memory.snapshot_view import QueryContext
from memory.strategies.kgermar_fusion import kgermar_fusion

TEXTS = ("Where does Priya Natarajan work?", "Who succeeded Eleanor Whitfield?")


def test_the_widened_ask_extends_the_first(graph_memory) -> None:
    view = graph_memory._view
    for text in TEXTS:
        first = kgermar_fusion(view, QueryContext(text, 3, depth=3))
        view.cache.pop("kgermar_rankings", None)
        widened = kgermar_fusion(view, QueryContext(text, 6, depth=3))
        assert len(first.scored) == 3 and widened.scored[:3] == first.scored
        assert widened.explanation == first.explanation
        kept = kgermar_fusion(view, QueryContext(text, 6, depth=3))
        assert kept.scored == widened.scored  # read from the kept ranking


def test_another_first_k_is_ranked_anew(graph_memory) -> None:
    view = graph_memory._view
    text = TEXTS[0]
    small = kgermar_fusion(view, QueryContext(text, 2, depth=2))
    large = kgermar_fusion(view, QueryContext(text, 2, depth=5))
    view.cache.pop("kgermar_rankings", None)
    assert large.scored == kgermar_fusion(view, QueryContext(text, 2, depth=5)).scored
    assert small.explanation["bank_budget"] == 2 and large.explanation["bank_budget"] == 5
    assert len(small.explanation["structural_entities"]) <= 2
    assert len(large.explanation["structural_entities"]) <= 5
