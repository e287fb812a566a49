"""REAL's expansion and repair on per-entity edge arrays and the passage links return
exactly what the hop-per-edge and segment-by-segment loops return
(`real_space_reference`): the same TopM paths, typed and untyped, in the same order, for
every entity of the sample graph and some topic, phrase and structural nodes as a root
and one hop further, under every
beam intent, as of before and after a move, speculative or not, with every repair
template and with some turned off; and the segments ranked from the evidence of whole
searches are the credit loop's."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from memory.flat_prior import flat_prior
from memory.passage_links import passage_links
from memory.real import space as space_module
from memory.real.anchors import anchor
from memory.real.beam import BeamParams, beam_search
from memory.real.evaluator import EmbeddingEvaluator, evaluator_for
from memory.real.evidence import aggregate, rank_segments
from memory.real.intents import INTENTS, expected_answer_type
from memory.real.paths import Hop, Path
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
    links = passage_links(view)
    focus = np.zeros(links.n_segments, bool)
    focus[::2] = True  # hubs leave through every other segment
    space = SearchSpace.of(view, query, 3, links, focus)
    repairers = [
        Repairer(space, TEMPLATES),
        Repairer(space, (SPECULATION, CO_OCCURRENCE)),
        Repairer(space, ()),
    ]
    n = space.graph.n_entities
    others = [n + v for v in np.flatnonzero(links.node_entity < 0)[::7].tolist()]
    assert others
    compared, untyped = 0, 0
    for root in [*range(n), *others]:
        for intent in INTENTS:
            start = Path(root, space.node_name(root), intent)
            paths = [start, *reference.expand(space, start)[:2]]
            for path in paths:
                expanded = space.expand(path)
                assert expanded == reference.expand(space, path)
                untyped += sum(p.hops[-1].fact is None for p in expanded)
                for repairer in repairers:
                    assert repairer(path) == reference.repair(repairer, path)
                    assert repairer.rule_hops(path) == reference._rule_hops(repairer, path)
                compared += 1
    assert compared > (n + len(others)) * len(INTENTS)
    assert untyped > 0, "untyped links were compared too"


@pytest.mark.parametrize(
    "question",
    ["Where does Sam Okafor live?", "Who is the CEO of Acme?", "Why did Priya move offices?"],
)
@pytest.mark.parametrize("k", [1, 5, 50])
def test_ranked_segments_match_the_credit_loop(graph_memory, question: str, k: int) -> None:
    view = graph_memory._view
    query = QueryContext(question, k, None, True)
    links = passage_links(view)
    space = SearchSpace.of(view, query, 5, links)
    seeds = flat_prior(view, query).seed_entities(view)
    roots = anchor(view, space.graph, question, seeds, links)
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
    assert any(hop.segments for item in evidence for hop in item.path.hops)
    expected = reference.rank_segments(space.graph, evidence, k, links)
    assert rank_segments(space.graph, evidence, k, links) == expected
    assert 0 < len(expected[0]) <= k


@pytest.mark.parametrize(
    "question",
    ["Where does Sam Okafor live?", "Who is the CEO of Acme?", "Why did Priya move offices?"],
)
def test_embedding_scores_match_numpys_mean_norm_and_clip(graph_memory, question: str) -> None:
    """The evaluator's scores of every path a whole search scores (normal expansions and
    repairs, up to D_max hops) are, bit for bit, those of `np.mean`, `np.linalg.norm`
    and `np.clip`; so are those of random float32 paths of one to four hops."""
    view = graph_memory._view
    query = QueryContext(question, 5, None, True)
    space = SearchSpace.of(view, query, 5)
    expected_type = expected_answer_type(question)
    evaluator = evaluator_for(view, question, {}, space.query_vector, expected_type)
    scored: list[Path] = []

    def evaluate(paths):
        scored.extend(paths)
        return evaluator.score(paths)

    roots = anchor(view, space.graph, question, flat_prior(view, query).seed_entities(view))
    for root in roots:
        start = Path(root.entity, root.name, root.intent)
        beam_search(start, space.expand, Repairer(space), evaluate, BeamParams())
    assert any(p.hops for p in scored)
    for path in scored:
        old = reference.embedding_scores(evaluator.query_vector, expected_type, path)
        assert evaluator.score_one(path) == old
    rng = np.random.default_rng(7)
    for _ in range(500):
        hops = tuple(
            Hop(i, i, i + 1, "r", "x", "t", 1.0, vector=rng.normal(size=16).astype(np.float32))
            for i in range(int(rng.integers(1, 5)))
        )
        path = Path(0, "x", "fact", hops)
        unit = rng.normal(size=16).astype(np.float32)
        ours = EmbeddingEvaluator(unit, None).score_one(path)
        assert ours == reference.embedding_scores(unit, None, path)


def test_hop_confidences_are_the_fact_rows(graph_memory) -> None:
    """The graph's `fact_confidence` that hops and the stability filter read is each fact
    row's confidence."""
    space = SearchSpace.of(graph_memory._view, QueryContext("q", 5, None, True), 5)
    graph = space.graph
    assert len(graph.facts) > 0
    for i in range(len(graph.facts)):
        assert float(graph.fact_confidence[i]) == float(graph.facts[i]["confidence"])


def test_entity_memo_stays_bounded(monkeypatch) -> None:
    """An `EntityMemo` keeps what it is given until the items would pass its bound, then
    starts over."""
    monkeypatch.setattr(space_module, "ENTITY_MEMO", 10)
    memo = space_module.EntityMemo()
    memo.put(1, "a", 6)
    memo.put(2, "b", 4)
    assert (memo.get(1), memo.get(2)) == ("a", "b")
    memo.put(3, "c", 1)
    assert (memo.get(1), memo.get(2), memo.get(3)) == (None, None, "c")
