"""The explanation of a PersonalAI strategy lists the first 50 names of the nodes it
visited (`PersonalGraph.first_names`): the head of every name sorted, read from the
entities' places in the order of their names and the other nodes' ids."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from memory.personalai.hypergraph import PersonalGraph, personal_graph_of
from memory.snapshot_view import QueryContext


def test_first_names_are_the_head_of_every_name_sorted(graph_memory):
    personal = personal_graph_of(graph_memory._view, QueryContext("Who is the CEO of Acme?", 5))
    n_nodes, n_entities = personal.hypergraph.n_nodes, personal.graph.n_entities
    assert n_nodes > n_entities  # passage nodes are named too
    rng = np.random.default_rng(0)
    for nodes in (
        np.arange(n_nodes),
        np.arange(n_entities),
        np.arange(n_entities, n_nodes),
        rng.permutation(n_nodes)[: n_nodes // 3],
        np.zeros(0, np.int64),
    ):
        for count in (0, 1, 5, 50, n_nodes + 1):
            expected = sorted(personal.names_of(nodes))[:count]
            assert personal.first_names(nodes, count) == expected, (len(nodes), count)


def test_entity_order_is_pythons_string_order():
    """Arrow's byte order of UTF-8 strings is Python's code point order, ties by
    position; names Arrow cannot take are sorted by Python."""
    names = ["b", "a", "é", "Z", "a", "ab", "", "😀", "ü", "a b", "ß"]
    order = PersonalGraph._entity_order.func(
        SimpleNamespace(graph=SimpleNamespace(entity_names=names))
    )
    assert order.tolist() == sorted(range(len(names)), key=names.__getitem__)
    odd = ["b", "\ud800", "a"]  # a lone surrogate: no UTF-8
    order = PersonalGraph._entity_order.func(
        SimpleNamespace(graph=SimpleNamespace(entity_names=odd))
    )
    assert order.tolist() == [2, 0, 1]
