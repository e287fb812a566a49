"""REAL's expansion and repair on per-entity edge arrays return exactly what the
hop-per-edge loops returned (`real_space_reference`): the same TopM paths, in the same
order, for every entity of the sample graph as a root and one hop further, under every
beam intent, as of before and after a move, speculative or not, with every repair
template and with some turned off; and the segments ranked from the evidence of whole
searches are the credit loop's."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.flat_prior import flat_prior
from memory.real.anchors import anchor
from memory.real.beam import BeamParams, beam_search
from memory.real.evaluator import evaluator_for
from memory.real.evidence import aggregate, rank_segments
from memory.real.intents import INTENTS, expected_answer_type
from memory.real.paths import Path
from memory.real.repair import CO_OCCURRENCE, SPECULATION, TEMPLATES, Repairer
from memory.real.space import SearchSpace
from memory.snapshot_view import QueryContext
from tests.memory import real_space_reference as reference

MOMENTS = [datetime(2023, 6, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC), None]


@pytest.mark.parametrize("valid_at", MOMENTS, ids=["before", "after", "cutoff"])
@pytest.mark.parametrize("speculative", [False, True])
def test_expand_and_repair_match_the_loops(graph_memory, valid_at, speculative) -> None:
    view = graph_memory._view
    query = QueryContext("Where does Sam Okafor live and why?", 5, valid_at, speculative)
    space = SearchSpace.of(view, query, 3)
    repairers = [
        Repairer(space, TEMPLATES),
        Repairer(space, (SPECULATION, CO_OCCURRENCE)),
        Repairer(space, ()),
    ]
    compared = 0
    for root in range(space.graph.n_entities):
        for intent in INTENTS:
            start = Path(root, space.graph.entity_names[root], intent)
            paths = [start, *reference.expand(space, start)[:2]]
            for path in paths:
                assert space.expand(path) == reference.expand(space, path)
                for repairer in repairers:
                    assert repairer(path) == reference.repair(repairer, path)
                    assert repairer.rule_hops(path) == reference._rule_hops(repairer, path)
                compared += 1
    assert compared > space.graph.n_entities * len(INTENTS)


@pytest.mark.parametrize(
    "question",
    ["Where does Sam Okafor live?", "Who is the CEO of Acme?", "Why did Priya move offices?"],
)
@pytest.mark.parametrize("k", [1, 5, 50])
def test_ranked_segments_match_the_credit_loop(graph_memory, question: str, k: int) -> None:
    view = graph_memory._view
    query = QueryContext(question, k, None, True)
    space = SearchSpace.of(view, query, 5)
    roots = anchor(view, space.graph, question, flat_prior(view, query).seed_entities(view))
    evaluator = evaluator_for(
        view, question, {}, space.query_vector, expected_answer_type(question)
    )
    final = {}
    for root in roots:
        result = beam_search(
            Path(root.entity, root.name, root.intent),
            space.expand,
            Repairer(space),
            evaluator.score,
            BeamParams(),
        )
        final.update(result.final)
    evidence = aggregate(final)
    assert evidence
    expected = reference.rank_segments(space.graph, evidence, k)
    assert rank_segments(space.graph, evidence, k) == expected
    assert 0 < len(expected[0]) <= k
