"""REAL retrieval (`real_beam`): intents, the beam search and its repair budget on
hand-built inputs, the evaluators, and end to end on the LLM-free sample snapshot (the
two-hop office city, as-of answers, repairs, the LLM evaluator against a local fake
OpenAI-compatible server)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np
import pytest

from memory.real.beam import BeamParams, beam_search, counterfactual_reasons, repair_budget
from memory.real.evaluator import DISJOINT_TIME, EmbeddingEvaluator, parse_scores
from memory.real.evidence import aggregate
from memory.real.intents import (
    CAUSAL,
    CONTRAST,
    EVOLUTION,
    FACT,
    TEMPORAL,
    compatible,
    expected_answer_type,
    fact_intent,
    query_intent,
)
from memory.real.paths import Hop, Path, Scores
from memory.real.repair import (
    CAUSALITY,
    HYPONYMY,
    SPECULATION,
    SYMMETRY,
    TEMPORAL_SUCCESSION,
    template_for,
)
from memory.real.space import INTENT, STABILITY, TIME, SearchSpace
from memory.snapshot_view import QueryContext
from stores.fact_queries import AsOf, facts_table_as_of
from tests.transforms.llm.conftest import fake_server  # noqa: F401  (fixture reused)
from tests.transforms.llm.fake_openai_server import chat_response

PRIYA = "Which city is Priya Natarajan's office in?"
PRIYA_PATH = (
    "[Priya Natarajan] -[work_at]-> [Harborview Office] ; "
    "[Harborview Office] -[locate_in]-> [Rotterdam]"
)
BEFORE_MOVE = datetime(2023, 6, 1, tzinfo=UTC)
AFTER_MOVE = datetime(2024, 1, 1, tzinfo=UTC)


# --- intents -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("Why was the Tonerline 500 recalled?", CAUSAL),
        ("Who was CEO before Marcus Bennett?", TEMPORAL),
        ("Where did Sam use to live?", FACT),
        ("Which city did Sam move to?", EVOLUTION),
        ("When did Sam move to Lisbon?", EVOLUTION),
        ("Compare the Inkwell 3000 and the Inkwell 4000", CONTRAST),
        ("Who leads the Firmware team?", FACT),
    ],
)
def test_query_intent(text: str, intent: str):
    assert query_intent(text) == intent


def test_fact_labels_and_compatibility():
    assert fact_intent("causes", "multi", False) == CAUSAL
    assert fact_intent("succeed", "multi", False) == TEMPORAL
    assert fact_intent("live_in", "single", False) == EVOLUTION
    assert fact_intent("likes", "multi", True) == EVOLUTION
    assert fact_intent("work_at", "multi", False) == FACT
    assert compatible(FACT, CAUSAL) and compatible(FACT, FACT)
    assert compatible(CAUSAL, CAUSAL) and not compatible(CAUSAL, FACT)
    assert compatible(TEMPORAL, EVOLUTION) and not compatible(TEMPORAL, FACT)


def test_expected_answer_type():
    assert expected_answer_type(PRIYA) == "Location"
    assert expected_answer_type("Where does Sam live?") == "Location"
    assert expected_answer_type("Who is the CEO of Acme?") == "Person"
    assert expected_answer_type("Which company does Sam work for?") == "Organization"
    assert expected_answer_type("What happened to the Tonerline 500?") is None


def test_repair_templates_relax_exactly_one_filter():
    assert template_for(frozenset({TIME}), "live_in", EVOLUTION) == TEMPORAL_SUCCESSION
    assert template_for(frozenset({STABILITY}), "live_in", EVOLUTION) == SPECULATION
    assert template_for(frozenset({INTENT}), "likes", FACT) == SYMMETRY
    assert template_for(frozenset({INTENT}), "subclass_of", FACT) == HYPONYMY
    assert template_for(frozenset({INTENT}), "causes", CAUSAL) == CAUSALITY
    assert template_for(frozenset({TIME, STABILITY}), "live_in", EVOLUTION) is None


# --- beam search on a toy graph --------------------------------------------------------


def _hop(source: int, target: int, repair: str | None = None) -> Hop:
    return Hop(None, source, target, "r", f"n{target}", f"[n{source}] -[r]-> [n{target}]", 1.0,
               repair=repair)  # fmt: skip


class Toy:
    """A hand-built graph with per-node evaluator scores: node -> (S_QR, S_LC, S_AS)."""

    def __init__(self, edges: dict[int, list[int]], scores: dict[int, tuple[float, ...]]):
        self.edges, self.scores = edges, scores
        self.repair_calls: list[Path] = []
        self.recovered: dict[int, list[int]] = {}

    def expand(self, path: Path) -> list[Path]:
        ends = [n for n in self.edges.get(path.end, []) if not path.visits(n)]
        return [path.extend(_hop(path.end, n)) for n in ends]

    def repair(self, path: Path) -> list[Path]:
        self.repair_calls.append(path)
        ends = [n for n in self.recovered.get(path.end, []) if not path.visits(n)]
        return [path.extend(_hop(path.end, n, "symmetry")) for n in ends]

    def evaluate(self, paths: Sequence[Path]) -> list[Scores]:
        return [Scores(*self.scores.get(p.end, (0.0, 1.0, 0.0))) for p in paths]


def _search(toy: Toy, params: BeamParams):
    return beam_search(Path(0, "n0", FACT), toy.expand, toy.repair, toy.evaluate, params)


def test_beam_keeps_the_k_best():
    children = list(range(1, 9))
    edges = {0: children, **{c: [10 + c] for c in children}}
    scores = {c: (0.9, 0.9, c / 10) for c in children}
    scores |= {10 + c: (0.9, 0.9, 0.95) for c in children}
    result = _search(Toy(edges, scores), BeamParams(k=3, max_depth=2, m=8))
    assert result.trace.beams == 1 + 3
    assert {p.hops[0].target for p in result.final} == {6, 7, 8}
    assert all(len(p.hops) == 2 for p in result.final)


def test_depth_bound_and_flush_at_max_depth():
    chain = {i: [i + 1] for i in range(6)}
    scores = {i: (0.9, 0.9, i / 10) for i in range(1, 7)}
    for depth in (1, 2, 3):
        result = _search(Toy(chain, scores), BeamParams(max_depth=depth))
        (path,) = result.final
        assert len(path.hops) == depth and result.trace.depth == depth


def test_stop_when_no_expansion_is_more_sufficient():
    edges = {0: [1], 1: [2, 3]}
    scores = {1: (0.9, 0.9, 0.8), 2: (0.9, 0.9, 0.5), 3: (0.9, 0.9, 0.8)}
    result = _search(Toy(edges, scores), BeamParams())
    assert [p.entities for p in result.final] == [(0, 1)]


def test_repair_fires_only_when_needed():
    scores = {1: (0.8, 0.9, 0.5), 2: (0.6, 0.9, 0.3), 3: (0.7, 0.8, 0.9), 4: (0.5, 0.5, 0.4)}
    toy = Toy({0: [1, 2], 1: [3], 2: [4]}, scores)
    toy.recovered = {0: [7], 1: [8], 2: [9]}
    result = _search(toy, BeamParams(max_depth=2))
    assert toy.repair_calls == []
    assert {p.end for p in result.final} == {3, 4}
    assert result.trace.counterfactual_triggers == 0 and not result.trace.repairs


def test_repair_within_budget_when_candidates_are_unreliable():
    toy = Toy({0: [1, 2]}, {1: (0.3, 0.9, 0.2), 2: (0.2, 0.9, 0.1)})
    toy.recovered = {0: list(range(20, 30))}
    toy.scores |= {n: (0.9, 0.9, 0.1 + n / 100) for n in range(20, 30)}
    result = _search(toy, BeamParams(m=3, max_depth=1))
    assert result.trace.reasons == {"low_relevance": 1}
    assert result.trace.repairs == {"symmetry": 3}  # B_cf = m - |N_rel| = 3 - 0
    recovered = [p for p in result.final if p.repairs]
    assert {p.end for p in recovered} == {27, 28, 29}


def test_no_candidates_triggers_repair_and_budget_formula():
    params = BeamParams(m=5)
    assert counterfactual_reasons([], params) == ["no_candidates"]
    assert counterfactual_reasons([Scores(0.9, 0.4, 0.1)], params) == ["low_coherence"]
    reliable, unreliable = Scores(0.6, 0.6, 0.1), Scores(0.4, 0.9, 0.1)
    assert repair_budget([reliable, reliable, unreliable], params) == 3
    assert repair_budget([reliable] * 7, params) == 0
    toy = Toy({}, {5: (0.9, 0.9, 0.9)})
    toy.recovered = {0: [5]}
    result = _search(toy, params)
    assert [p.entities for p in result.final] == [(0, 5)]
    assert result.trace.reasons["no_candidates"] >= 1


# --- evaluators ------------------------------------------------------------------------


def _unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_embedding_evaluator_scores():
    query = _unit(1, 0, 0)
    evaluator = EmbeddingEvaluator(query, "Location")
    assert evaluator.score_one(Path(0, "a", FACT)) == Scores(0.0, 1.0, 0.0)
    city = Hop(1, 0, 1, "r", "b", "t", 1.0, target_type="Location", vector=_unit(1, 1, 0))
    firm = Hop(1, 0, 1, "r", "b", "t", 1.0, target_type="Organization", vector=_unit(1, 1, 0))
    to_city, to_firm = evaluator.score([Path(0, "a", FACT, (city,)), Path(0, "a", FACT, (firm,))])
    assert to_city.relevance == pytest.approx(np.sqrt(0.5), abs=1e-6)
    assert to_city.sufficiency == pytest.approx(to_city.relevance)
    assert to_firm.sufficiency == pytest.approx(to_city.relevance / 2)
    early = Hop(1, 0, 1, "r", "b", "t", 1.0, valid_to=datetime(2020, 1, 1), vector=_unit(0, 1, 0))
    late = Hop(2, 1, 2, "r", "c", "t", 1.0, valid_from=datetime(2021, 1, 1), vector=_unit(0, 1, 0))
    assert evaluator.score_one(Path(0, "a", FACT, (early, late))).coherence == pytest.approx(0.5)


def test_paths_extended_hop_by_hop_score_as_paths_built_whole():
    """A path `extend` builds keeps its parent's running state (entities, confidence, the
    evaluator's vector sum and weakest link): equal, equally hashed and scored bit for bit
    as the same path built whole, mixed vector dtypes and hops without a vector too."""
    rng = np.random.default_rng(7)
    query = rng.standard_normal(8).astype(np.float32)
    vectors = [rng.standard_normal(8).astype(np.float32) for _ in range(3)]
    hops = [
        Hop(1, 0, 1, "r", "b", "t1", 0.9, vector=vectors[0], valid_to=datetime(2020, 1, 1)),
        Hop(2, 1, 2, "r", "d", "t2", 0.7, vector=vectors[1], valid_from=datetime(2021, 1, 1)),
        Hop(None, 2, 3, "co", "c", "t3", 0.5, vector=None, target_type="Location"),
        Hop(3, 3, 4, "r", "e", "t4", 0.3, vector=vectors[2].astype(np.float64)),
    ]
    stepwise = EmbeddingEvaluator(query, "Location")
    path = Path(0, "a", FACT)
    stepwise.score_one(path)
    for depth, hop in enumerate(hops, 1):
        path = path.extend(hop)
        whole = Path(0, "a", FACT, tuple(hops[:depth]))
        assert path == whole and hash(path) == hash(whole)
        assert path.entities == whole.entities and path.confidence == whole.confidence
        scores = stepwise.score_one(path)
        assert scores == EmbeddingEvaluator(query, "Location").score_one(whole)
        kept = [h.vector for h in hops[:depth] if h.vector is not None]
        centroid = np.mean(kept, axis=0)
        cosine = float(centroid @ query) / float(np.sqrt(centroid.dot(centroid)))
        assert scores.relevance == max(0.0, min(1.0, cosine))
    assert stepwise.score_one(path).coherence <= DISJOINT_TIME  # hops 1 and 2


def test_llm_answer_parsing():
    text = json.dumps({"scores": [{"path": 1, "relevance": 1, "coherence": 0.5, "sufficiency": 0}]})
    assert parse_scores(text, 2) == {1: Scores(1.0, 0.5, 0.0)}
    with pytest.raises(ValueError):
        parse_scores('{"scores": [{"path": 0, "relevance": 2}]}', 1)


# --- end to end on the sample snapshot -------------------------------------------------


def _facts(result) -> set[tuple[str, str, str]]:
    return {(f["head"], f["relation"], f["tail"]) for hit in result for f in hit.facts}


def test_untyped_links_reach_segments_the_facts_do_not(graph_memory):
    """With the passage links, beams take `mentioned_with` / `next_turn` hops whose
    evidence segments are ranked; with `untyped_links` off, only facts are walked."""
    linked = graph_memory.query(PRIYA, strategy="real_beam", k=5)
    untyped = [p for p in linked.explanation["paths"] if "mentioned_with" in p["evidence"]]
    assert untyped, "an evidence path through an untyped link"
    assert any(a["linked_by"] == "flat node" for a in linked.explanation["seeds"])
    typed = graph_memory.query(PRIYA, strategy="real_beam", k=5, options={"untyped_links": "off"})
    assert not any("mentioned_with" in p["evidence"] for p in typed.explanation["paths"])
    assert not any(a["linked_by"] == "flat node" for a in typed.explanation["seeds"])
    with pytest.raises(ValueError, match="untyped_links"):
        graph_memory.query(PRIYA, strategy="real_beam", k=5, options={"untyped_links": "x"})


def test_evidence_weighs_each_path_by_its_root():
    """S(P|q) times the root's weight ranks the evidence: a weaker path from a heavy root
    (one the flat ranking's top passages name) comes first."""

    def hop(fact: int, source: int) -> Hop:
        return Hop(fact, source, 9, "r", "x", f"[{source}] -[r]-> [x]", 1.0)

    strong = Path(0, "a", FACT, (hop(0, 0),))
    weak = Path(1, "b", FACT, (hop(1, 1),))
    final = {strong: Scores(0.8, 1.0, 0.8), weak: Scores(0.4, 1.0, 0.4)}
    assert [e.path for e in aggregate(final)] == [strong, weak]
    weighted = aggregate(final, {0: 0.1, 1: 1.0}.__getitem__)
    assert [e.path for e in weighted] == [weak, strong]
    assert weighted[1].score == pytest.approx(0.1 * (0.8 + 1.0 + 1.6) / 4)


def test_two_hop_office_city(graph_memory):
    result = graph_memory.query(PRIYA, strategy="real_beam", k=5)
    explanation = result.explanation
    assert {"entity": "Priya Natarajan", "intent": FACT, "linked_by": "name"} in explanation[
        "seeds"
    ]
    assert explanation["expected_answer_type"] == "Location"
    assert PRIYA_PATH in [p["path"] for p in explanation["paths"]]
    typed = graph_memory.query(PRIYA, strategy="real_beam", k=5, options={"untyped_links": "off"})
    best = typed.explanation["paths"][0]
    assert best["path"] == PRIYA_PATH and best["repairs"] == [], "S(P|q) alone ranks it first"
    texts = [hit.text for hit in result]
    assert any("Priya Natarajan works at the Harborview Office" in t for t in texts)
    assert any("Harborview Office is located in Rotterdam" in t for t in texts)
    assert any(PRIYA_PATH in hit.paths for hit in result)
    assert explanation["params"] == {
        "beam_width": 5,
        "max_depth": 3,
        "expansions": 5,
        "theta_stable": 0.8,
        "delta_qr": 0.5,
        "delta_lc": 0.5,
    }
    assert max(len(p["path"].split(" ; ")) for p in explanation["paths"]) <= 3
    json.dumps(explanation)


@pytest.mark.parametrize("valid_at", [BEFORE_MOVE, AFTER_MOVE, None])
@pytest.mark.parametrize("speculative", [False, True])
def test_filters_match_the_fact_store(graph_memory, valid_at, speculative):
    view = graph_memory._view
    query = QueryContext("Where does Sam live?", 5, valid_at, speculative)
    space = SearchSpace.of(view, query, 5)
    passing = {
        f["version_id"]
        for i, f in enumerate(space.graph.facts)
        if not space.failed_filters(i, FACT) - {INTENT}
    }
    at = valid_at or view.snapshot.recorded_cutoff
    with view.reading() as con:
        rows = facts_table_as_of(con, "sample", AsOf(at, view.snapshot.recorded_cutoff)).to_pylist()
    expected = {f["version_id"] for f in rows if speculative or f["stable"]}
    assert passing == expected


def test_as_of_home_before_and_after_the_move(graph_memory):
    leeds, lisbon = ("Sam Okafor", "live_in", "Leeds"), ("Sam Okafor", "live_in", "Lisbon")
    question = "Where might Sam Okafor live?"  # speculative: hedged facts are evidence
    before = graph_memory.query(question, strategy="real_beam", k=5, valid_at=BEFORE_MOVE)
    after = graph_memory.query(question, strategy="real_beam", k=5, valid_at=AFTER_MOVE)
    assert before.explanation["speculative"] and after.explanation["speculative"]
    assert leeds in _facts(before) and lisbon not in _facts(before)
    assert lisbon in _facts(after) and leeds not in _facts(after)
    assert any("I live in Leeds" in hit.text for hit in before)
    assert any("I live in Lisbon now" in hit.text for hit in after)
    assert not any("I live in Lisbon now" in hit.text for hit in before)


def test_speculation_repair_recovers_a_hedged_fact_only_when_enabled(graph_memory):
    """On the typed facts alone (untyped links fill a beam's reliable slots, leaving the
    repairs no budget): a starved beam recovers the hedged fact."""
    question = "Where does Sam Okafor live?"
    typed = {"untyped_links": "off"}
    repaired = graph_memory.query(
        question, strategy="real_beam", k=5, valid_at=BEFORE_MOVE, options=typed
    )
    counterfactual = repaired.explanation["counterfactual"]
    assert counterfactual["reasons"]["no_candidates"] >= 1
    assert counterfactual["repairs"].get("speculation", 0) >= 1
    hedged = [p for p in repaired.explanation["paths"] if "[live_in]-> [Leeds]" in p["path"]]
    assert hedged and hedged[0]["repairs"] == ["speculation"]
    assert not any("[Lisbon]" in p["path"] and "live_in" in p["path"] for p in hedged)
    plain = graph_memory.query(
        question, strategy="real_beam", k=5, valid_at=BEFORE_MOVE, options={**typed, "repairs": []}
    )
    assert plain.explanation["counterfactual"]["repairs"] == {}
    assert not any("live_in" in p["path"] for p in plain.explanation["paths"])


def _scoring_server(body: dict) -> tuple[int, dict]:
    """Score every listed path; a path reaching Rotterdam answers the question."""
    content = body["messages"][-1]["content"]
    numbers = re.findall(r"^(\d+): (.*)$", content, flags=re.MULTILINE)
    scores = [
        {
            "path": int(n),
            "relevance": 0.9 if "-->" in text or "<--" in text else 0.2,
            "coherence": 1.0,
            "sufficiency": 1.0 if "Rotterdam" in text else 0.3 if "--" in text else 0.0,
        }
        for n, text in numbers
    ]
    return 200, chat_response(json.dumps({"scores": scores}), 20, 10)


def test_llm_evaluator_calls_are_counted_and_cached(graph_memory, fake_server, tmp_path):  # noqa: F811
    server = fake_server(_scoring_server)
    options = {
        "evaluator": "llm",
        "llm_backend": "openai",
        "llm_model": "fake-evaluator",
        "llm_base_url": server.base_url,
        "llm_cache": str(tmp_path / "evaluator_cache.duckdb"),
    }
    result = graph_memory.query(PRIYA, strategy="real_beam", k=5, options=options)
    explanation = result.explanation
    calls = len(server.requests)
    assert explanation["evaluator"] == "llm"
    assert calls > 0 and explanation["llm_calls"] == calls
    assert explanation["llm_tokens"] == 30 * calls and explanation["llm_failures"] == 0
    assert explanation["evaluator_calls"] == calls
    assert all("Priya Natarajan" in r["messages"][-1]["content"] for r in server.requests)
    answers = [p for p in explanation["paths"] if p["path"].endswith("[Rotterdam]")]
    assert answers and all(p["scores"]["answer_sufficiency"] == 1.0 for p in answers)
    assert PRIYA_PATH in {p["path"] for p in explanation["paths"]}
    widened = graph_memory.query(PRIYA, strategy="real_beam", k=5, options=options)
    assert len(server.requests) == calls, "the search is kept per query: no second search"
    assert widened.explanation == explanation
    graph_memory._view.cache.clear()  # a later session: the search runs, its answers cached
    again = graph_memory.query(PRIYA, strategy="real_beam", k=5, options=options)
    assert len(server.requests) == calls
    assert again.explanation["llm_calls"] == 0 and again.explanation["llm_cache_hits"] == calls
