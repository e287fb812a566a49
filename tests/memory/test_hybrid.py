"""The `hybrid` strategy on the sample snapshot, its weights, and passage-level hits."""

from __future__ import annotations

import json

import pytest

from transforms.hybrid_weights import (
    DEFAULT_WEIGHTS,
    normalised,
    parse_weights,
    pinned_weights,
    resolve_weights,
    write_fitted,
)


def test_hybrid_fuses_every_signal_with_the_pinned_weights(graph_memory) -> None:
    result = graph_memory.query("Who leads the Firmware team?", strategy="hybrid", k=3)
    explanation = result.explanation
    assert set(explanation["signals"]) == {"bm25", "dense", "dense_fusion"}
    assert explanation["encoders"]["dense_fusion"] == graph_memory.snapshot.fusion_encoder
    assert explanation["weights"]["documents"] == pytest.approx(DEFAULT_WEIGHTS["documents"])
    assert explanation["weights_source"]["documents"].startswith("default")
    assert "Kowalski leads the Firmware team" in result.hits[0].text
    top = result.hits[0].segment_id
    assert set(explanation["contributions"][top]) == {"bm25", "dense", "dense_fusion"}
    json.dumps(explanation)


def test_query_weights_override_the_snapshot(graph_memory) -> None:
    lexical = {"documents": {"bm25": 1.0}, "conversations": {"bm25": 1.0}}
    only_bm25 = graph_memory.query(
        "printer error E-42", strategy="hybrid", k=3, options={"hybrid_weights": lexical}
    )
    bm25 = graph_memory.query("printer error E-42", strategy="bm25", k=3)
    assert [h.segment_id for h in only_bm25] == [h.segment_id for h in bm25]
    assert only_bm25.explanation["weights_source"]["documents"] == "query options"


def test_hits_are_distinct_passages_unless_segments_are_asked_for(graph_memory) -> None:
    passages = graph_memory.query("Acme Corporation", strategy="dense", k=6)
    keys = [
        h.provenance["doc_id"] if h.provenance["kind"] == "chunk" else h.segment_id
        for h in passages
    ]
    assert len(keys) == len(set(keys)) == 6
    segments = graph_memory.query("Acme Corporation", strategy="dense", k=6, unit="segment")
    assert len(segments.hits) == 6 and segments.explanation["unit"] == "segment"
    for hit in passages:
        for other in hit.evidence:
            assert other["score"] <= hit.score
    with pytest.raises(ValueError, match="unit"):
        graph_memory.query("Acme", unit="sentence")


def test_weights_parse_normalise_and_resolve(tmp_path) -> None:
    parsed = parse_weights({"documents": {"bm25": 2, "dense": 2}})
    assert parsed["documents"] == {"bm25": 0.5, "dense": 0.5, "dense_fusion": 0.0}
    assert parsed["conversations"] == DEFAULT_WEIGHTS["conversations"]
    assert normalised(DEFAULT_WEIGHTS["documents"], ("bm25", "dense")) == pytest.approx(
        {"bm25": 0.1 / 0.7, "dense": 0.6 / 0.7}
    )
    for bad in ({"novels": {"bm25": 1}}, {"documents": {"colbert": 1}}, {"documents": {"bm25": 0}}):
        with pytest.raises(ValueError):
            parse_weights(bad)
    assert pinned_weights(tmp_path)["hybrid_weights"] == DEFAULT_WEIGHTS
    write_fitted(tmp_path, "documents", {"weights": {"dense": 1.0}, "benchmark": "musique"})
    pinned = pinned_weights(tmp_path)
    assert pinned["hybrid_weights"]["documents"]["dense"] == 1.0
    assert pinned["hybrid_weights_source"]["documents"].startswith("fitted on musique")
    weights, sources = resolve_weights(pinned, {})
    assert weights["documents"]["dense"] == 1.0 and sources == pinned["hybrid_weights_source"]
    assert resolve_weights({}, {})[1]["documents"].startswith("default")
