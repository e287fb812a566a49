"""KGERMAR's triple weight w = alpha*conf + (1-alpha)*freq/maxfreq and its filter."""

import pytest

from transforms.triple_weights import filter_candidates, weigh


def test_weight_formula_with_max_confidence_and_frequency():
    a, b = ("acme", "LocatedAt", "rotterdam"), ("maria", "PartOf", "acme")
    weights = weigh([(a, 0.4), (a, 0.9), (b, 0.6)])
    assert weights[a].confidence == 0.9 and weights[a].frequency == 2
    assert weights[a].weight == pytest.approx(0.7 * 0.9 + 0.3 * 1.0)
    assert weights[b].weight == pytest.approx(0.7 * 0.6 + 0.3 * 0.5)
    assert weigh([(b, 0.6)], alpha=1.0)[b].weight == pytest.approx(0.6)
    with pytest.raises(ValueError, match="alpha"):
        weigh([], alpha=1.5)


def _row(head, relation, tail, confidence, doc="d1", negated=False):
    return {
        "head_text": head,
        "relation": relation,
        "tail_text": tail,
        "confidence": confidence,
        "doc_id": doc,
        "negated": negated,
    }


def test_filter_keeps_weight_above_theta_and_consolidates_names():
    rows = [
        _row("Acme Corp", "LocatedAt", "Rotterdam", 0.5),
        _row("ACME", "LocatedAt", "Rotterdam", 0.3),  # same triple after consolidation
        _row("Maria", "PartOf", "Acme", 0.6),  # 0.42 + 0.15 = 0.57
        _row("Omar", "PartOf", "Acme", 0.4),  # 0.28 + 0.15 = 0.43: dropped
        _row("Lena", "PartOf", "Acme", 0.2, negated=True),  # retraction: passes through
    ]
    kept = filter_candidates(rows)
    assert [(r["head_text"], r["confidence"]) for r in kept] == [
        ("Acme Corp", 0.65),
        ("ACME", 0.65),
        ("Maria", 0.57),
        ("Lena", 0.2),
    ]
    assert len(filter_candidates(rows, theta_conf=0.6)) == 3


def test_scope_weighs_each_document_on_its_own():
    rows = [
        _row("A", "IsA", "B", 0.5, doc="d1"),
        _row("A", "IsA", "B", 0.5, doc="d1"),
        _row("C", "IsA", "D", 0.5, doc="d2"),
    ]
    assert len(filter_candidates(rows)) == 2  # C-D: 0.35 + 0.15 in the whole collection
    assert len(filter_candidates(rows, scope="doc_id")) == 3  # max frequency in its document
