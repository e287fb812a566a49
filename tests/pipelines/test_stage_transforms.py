"""Each stage's Beam composite on in-memory rows (TestPipeline, no files): what it makes of
its input, step by step as `expand()` names them. The model stages take batches of rows
(`pipelines.stage_io` makes them as it reads), the fold takes rows."""

from __future__ import annotations

from dataclasses import asdict
from datetime import UTC, datetime

import apache_beam as beam
from apache_beam.testing.util import assert_that, equal_to

from pipelines.entity_mentions import ExtractMentions
from pipelines.fact_versions import FACTS, UNMATCHED, FoldConfig, FoldFacts
from pipelines.options import NerBackendConfig, SpacyStageConfig
from pipelines.relation_candidates import ExtractRelations, RelationStageConfig
from pipelines.segment_phrases import ExtractPhrases
from tests.beam_testing import direct_test_pipeline
from transforms.facts import Assertion

TEXT = "Priya Natarajan works at the Harborview Office in Rotterdam."
SEGMENT = {
    "segment_id": "s0",
    "collection": "c",
    "doc_id": "d",
    "kind": "chunk",
    "text": TEXT,
    "char_start": 0,
    "char_end": len(TEXT),
    "speaker": None,
}


def test_extract_mentions_finds_the_names_with_their_spans():
    with direct_test_pipeline() as p:
        mentions = p | beam.Create([[SEGMENT]]) | ExtractMentions(NerBackendConfig())
        spans = mentions | beam.Map(lambda m: (m["text"], m["char_start"], m["char_end"]))
        expected = [(name, TEXT.index(name), TEXT.index(name) + len(name))
                    for name in ("Priya Natarajan", "Rotterdam")]  # fmt: skip
        assert_that(spans, _contains(expected))


def test_extract_phrases_keeps_common_noun_phrases():
    segment = {**SEGMENT, "text": "The support group met after the printer firmware update."}
    with direct_test_pipeline() as p:
        phrases = p | beam.Create([[segment]]) | ExtractPhrases(SpacyStageConfig())
        assert_that(phrases | beam.Map(lambda r: r["phrase"]), _contains(["support group"]))


def test_extract_relations_reads_a_located_in_pattern():
    text = "The Harborview Office is located in Rotterdam."
    mentions = [
        {"text": "Harborview Office", "label": "FAC", "entity_type": "Location",
         "char_start": 4, "char_end": 21},
        {"text": "Rotterdam", "label": "GPE", "entity_type": "Location",
         "char_start": 36, "char_end": 45},
    ]  # fmt: skip
    segment = {**SEGMENT, "text": text, "context_device": None, "mentions": mentions}
    with direct_test_pipeline() as p:
        found = p | beam.Create([[segment]]) | ExtractRelations(RelationStageConfig())
        triples = found | beam.Map(lambda c: (c["head_text"], c["tail_text"]))
        assert_that(triples, _contains([("Harborview Office", "Rotterdam")]))


def test_fold_facts_closes_a_single_valued_fact_and_sets_aside_a_lone_retraction():
    def assertion(segment: str, tail: str, month: int, negated: bool = False) -> dict:
        return asdict(
            Assertion(head_id="sam", relation="live_in", tail_id=tail,
                      time=datetime(2023, month, 1, tzinfo=UTC), confidence=0.9,
                      negated=negated, segment_id=segment, extractor="x", doc_id="d")
        )  # fmt: skip

    rows = [assertion("s0", "leeds", 1), assertion("s1", "lisbon", 6),
            assertion("s2", "oslo", 9, negated=True)]  # fmt: skip
    with direct_test_pipeline() as p:
        outputs = p | beam.Create(rows) | FoldFacts(FoldConfig("c", "", {"live_in": "single"}))
        intervals = outputs[FACTS] | beam.Map(
            lambda f: (f["tail_entity_id"], f["valid_from"].month,
                       f["valid_to"].month if f["valid_to"] else None)
        )  # fmt: skip
        assert_that(intervals, equal_to([("leeds", 1, 6), ("lisbon", 6, None)]))
        lone = outputs[UNMATCHED] | beam.Map(lambda a: a["segment_id"])
        assert_that(lone, equal_to(["s2"]), label="unmatched")


def _contains(expected: list) -> object:
    def check(actual: list) -> None:
        missing = [e for e in expected if e not in actual]
        assert not missing, f"missing {missing} in {actual}"

    return check
