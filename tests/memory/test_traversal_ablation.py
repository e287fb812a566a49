"""Graph strategies with their traversal switched off, the traversal blend's settings, and
sessions as a retrieval unit."""

from __future__ import annotations

import pytest

from memory.evaluation import base_strategy, evaluated_names, session_unit_scores, split_ablation
from memory.memory import unit_groups
from memory.strategies.registry import FLAT_STRATEGIES, GRAPH_STRATEGIES, STRATEGIES
from transforms.brevity_prior import DEFAULT_BREVITY
from transforms.evaluation.retrieval_questions import RetrievalQuestion
from transforms.traversal_blend import DEFAULT_FLAT_SHARE, flat_shares, pinned_blend

QUESTION = "Which city is Priya Natarajan's office in?"


@pytest.mark.parametrize("strategy", GRAPH_STRATEGIES)
def test_a_strategy_without_its_traversal_returns_the_hybrid_ranking(
    graph_memory, strategy: str
) -> None:
    hybrid = graph_memory.query(QUESTION, strategy="hybrid", k=8)
    ablated = graph_memory.query(QUESTION, strategy=strategy, k=8, options={"traversal": "off"})
    assert [(h.segment_id, h.score) for h in ablated] == [(h.segment_id, h.score) for h in hybrid]
    assert ablated.explanation["traversal"] == "off"
    assert ablated.explanation["strategy"] == strategy


def test_the_traversal_switch_refuses_other_values(graph_memory) -> None:
    with pytest.raises(ValueError, match="traversal"):
        graph_memory.query(QUESTION, strategy="gram_paths", options={"traversal": "maybe"})


def test_an_evaluation_of_all_strategies_adds_one_ablation_row_per_graph_strategy() -> None:
    names = evaluated_names([])
    assert names[: len(STRATEGIES)] == list(STRATEGIES)
    ablations = names[len(STRATEGIES) :]
    assert ablations == [f"{name}:no_traversal" for name in GRAPH_STRATEGIES]
    assert not set(FLAT_STRATEGIES) & {base_strategy(n) for n in ablations}
    assert split_ablation("real_beam:no_traversal") == ("real_beam", {"traversal": "off"})
    assert base_strategy("hipporag_ppr:no_traversal+rerank") == "hipporag_ppr"
    assert evaluated_names(["dense"]) == ["dense"]


def test_flat_shares_come_from_the_option_then_the_snapshot_then_the_default() -> None:
    pinned = pinned_blend()
    assert flat_shares("personalai_beam", {}, {}) == DEFAULT_FLAT_SHARE["personalai"]
    changed = {"traversal_blend": {"memorai_dwpr": {"documents": 0.9}}}
    shares = flat_shares("memorai_dwpr", changed, {})
    assert shares["documents"] == 0.9
    assert shares["conversations"] == DEFAULT_FLAT_SHARE["memorai_dwpr"]["conversations"]
    assert set(flat_shares("gram_paths", pinned, {"flat_share": 0.25}).values()) == {0.25}
    with pytest.raises(ValueError, match="flat_share"):
        flat_shares("gram_paths", pinned, {"flat_share": 2})


def test_the_snapshot_pins_every_graph_strategy_s_blend(graph_memory) -> None:
    pinned = graph_memory.snapshot.retrieval["traversal_blend"]
    assert {name.split("_")[0] if name.startswith("personalai") else name for name in pinned} >= {
        "memorai_dwpr",
        "hipporag_ppr",
        "personalai",
    }


def test_sessions_collapse_their_turns_and_documents_their_chunks() -> None:
    rows = {
        "t1": {"kind": "turn", "doc_id": "c1", "session_id": "s1"},
        "t2": {"kind": "turn", "doc_id": "c1", "session_id": "s2"},
        "t3": {"kind": "turn", "doc_id": "c1", "session_id": "s1"},
        "t4": {"kind": "turn", "doc_id": "c2", "session_id": "s1"},
        "k1": {"kind": "chunk", "doc_id": "d1", "session_id": None},
        "k2": {"kind": "chunk", "doc_id": "d1", "session_id": None},
    }
    ranked = [(s, 1.0 - i / 10) for i, s in enumerate(["t1", "k1", "t2", "t3", "k2", "t4"])]
    sessions = unit_groups(ranked, rows.__getitem__, "session")
    assert [[s for s, _ in g] for g in sessions] == [["t1", "t3"], ["k1", "k2"], ["t2"], ["t4"]]
    passages = unit_groups(ranked, rows.__getitem__, "passage")
    assert [[s for s, _ in g] for g in passages] == [["t1"], ["k1", "k2"], ["t2"], ["t3"], ["t4"]]


def test_a_session_hit_lists_its_supporting_turns_with_their_spans(graph_memory) -> None:
    result = graph_memory.query(
        "printer error after the firmware update", "hybrid", 3, unit="session"
    )
    keys = [(h.provenance["doc_id"], h.provenance["session_id"]) for h in result]
    assert len(keys) == len(set(keys)) == 3
    for hit in result:
        for evidence in hit.evidence:
            other = graph_memory._view.segment(evidence["segment_id"], ("doc_id", "session_id"))
            assert (other["doc_id"], other["session_id"]) == (
                hit.provenance["doc_id"],
                hit.provenance["session_id"],
            )
            assert evidence["char_end"] > evidence["char_start"]


def test_session_unit_recall_counts_the_question_s_conversation_only() -> None:
    question = RetrievalQuestion(
        question_id="q",
        text="?",
        category="single-hop",
        gold=frozenset({"c1-t1"}),
        gold_sessions=frozenset({"c1/s2"}),
        scope_doc_id="c1",
    )
    other = [{"doc_id": "c2", "session_id": s} for s in ("s1", "s2", "s3")]
    ours = [{"doc_id": "c1", "session_id": s} for s in ("s1", "s2")]
    assert session_unit_scores(question, other + ours)["session_unit_recall@3"] == 1.0
    assert session_unit_scores(question, ours[:1])["session_unit_recall@3"] == 0.0


def test_the_brevity_prior_ranks_the_flat_prior_and_is_pinned(graph_memory) -> None:
    """With a weight far above the fused scores' spread, the ranking is by indexed terms,
    most first; the snapshot pins the prior's weights."""
    assert graph_memory.snapshot.retrieval["brevity_prior"] == DEFAULT_BREVITY
    hits = graph_memory.query(QUESTION, strategy="hybrid", k=8, options={"brevity": 1e6}).hits
    terms = graph_memory._view.lexical_search.term_counts([h.segment_id for h in hits])
    assert len(set(terms)) > 1 and terms == sorted(terms, reverse=True)
    plain = graph_memory.query(QUESTION, strategy="hybrid", k=8, options={"brevity": 0}).hits
    assert [h.segment_id for h in plain] != [h.segment_id for h in hits]
