"""Fact folding and append-only version planning."""

from datetime import UTC, datetime

from transforms.facts import fold_facts, plan_versions


def _cand(segment: str, head: str, rel: str, tail: str, negated: bool = False, conf: float = 0.75):
    return {
        "segment_id": segment,
        "doc_id": "d",
        "head_text": head,
        "relation": rel,
        "tail_text": tail,
        "negated": negated,
        "confidence": conf,
        "extractor": "x",
    }


T1, T2, T3 = (datetime(2023, m, 1, tzinfo=UTC) for m in (1, 6, 9))
OBSERVED = {"s1": T1, "s2": T2, "s3": T3}


def test_fold_groups_variants_and_takes_earliest_time():
    facts, rejected = fold_facts(
        "c",
        [
            _cand("s2", "ACME", "acquire", "Brightpage Labs"),
            _cand("s1", "Acme Corp", "acquire", "Brightpage Labs", conf=0.85),
        ],
        OBSERVED,
    )
    assert not rejected
    assert len(facts) == 1
    assert facts[0].valid_from == T1 and facts[0].confidence == 0.85
    assert facts[0].source_segment_ids == ["s1", "s2"]


def test_negation_closes_interval_and_orphan_negation_is_quarantined():
    facts, rejected = fold_facts(
        "c",
        [
            _cand("s1", "Sam", "work_at", "Northwind"),
            _cand("s3", "Sam", "work_at", "Northwind", negated=True),
            _cand("s2", "Sam", "live_in", "Paris", negated=True),
        ],
        OBSERVED,
    )
    assert [(f.valid_from, f.valid_to) for f in facts] == [(T1, T3)]
    assert [r.reason for r in rejected] == ["retraction of a fact never asserted"]


def test_planning_is_append_only_and_idempotent():
    facts, _ = fold_facts("c", [_cand("s1", "Sam", "live_in", "Leeds")], OBSERVED)
    first = plan_versions("c", facts, {}, {}, T1)
    assert [v["operation"] for v in first] == ["insert"]
    current = {v["fact_id"]: v for v in first}
    assert plan_versions("c", facts, current, {}, T2) == []
    closed, _ = fold_facts(
        "c",
        [_cand("s1", "Sam", "live_in", "Leeds"), _cand("s3", "Sam", "live_in", "Leeds", True)],
        OBSERVED,
    )
    second = plan_versions("c", closed, current, {}, T3)
    assert [(v["operation"], v["supersedes"]) for v in second] == [
        ("close", first[0]["version_id"])
    ]
    retracted = plan_versions("c", [], {v["fact_id"]: v for v in second}, {}, T3)
    assert [v["operation"] for v in retracted] == ["retract"]
