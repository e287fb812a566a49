"""Beam pipelines on the DirectRunner with TestPipeline and assert_that."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that

from pipelines import entity_mentions, relation_candidates
from pipelines.options import SpacyStageConfig
from schemas.tables import SEGMENT_WITH_MENTIONS, SEGMENTS

TEXTS = [
    "Priya Natarajan works at the Harborview Office.",
    "The Harborview Office is located in Rotterdam.",
]


def _segments(tmp_path: Path) -> str:
    rows = [
        {
            "segment_id": f"s{i}",
            "collection": "c",
            "doc_id": "d",
            "kind": "chunk",
            "seq": i,
            "text": t,
            "char_start": 0,
            "char_end": len(t),
            "speaker": None,
            "session_id": None,
            "turn_id": None,
            "observed_at": None,
        }
        for i, t in enumerate(TEXTS)
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=SEGMENTS), tmp_path / "segments.parquet")
    return str(tmp_path / "segments.parquet")


def _mentions_match(expected: set[tuple[str, str, str]]):
    def check(actual: list[dict]) -> None:
        found = {(m["segment_id"], m["text"], m["label"]) for m in actual}
        assert expected <= found, f"missing {expected - found}"

    return check


def test_ner_pipeline_batches_and_keeps_spans(tmp_path: Path):
    with TestPipeline() as p:
        mentions = entity_mentions.build(
            p, _segments(tmp_path), str(tmp_path / "out" / "m"), SpacyStageConfig()
        )
        assert_that(
            mentions,
            _mentions_match({("s0", "Priya Natarajan", "PERSON"), ("s1", "Rotterdam", "GPE")}),
        )
    assert list((tmp_path / "out").glob("m*.parquet")), "mentions were written as Parquet shards"


def test_relation_pipeline(tmp_path: Path):
    mention = {
        "text": "Rotterdam",
        "label": "GPE",
        "entity_type": "Location",
        "char_start": 36,
        "char_end": 45,
    }
    office = {
        "text": "The Harborview Office",
        "label": "ORG",
        "entity_type": "Organization",
        "char_start": 0,
        "char_end": 21,
    }
    rows = [
        {
            "segment_id": "s1",
            "collection": "c",
            "doc_id": "d",
            "text": TEXTS[1],
            "speaker": None,
            "mentions": [office, mention],
        }
    ]
    pq.write_table(
        pa.Table.from_pylist(rows, schema=SEGMENT_WITH_MENTIONS), tmp_path / "in.parquet"
    )

    def check(actual: list[dict]) -> None:
        assert {(r["head_text"], r["relation"], r["tail_text"]) for r in actual} == {
            ("The Harborview Office", "locate_in", "Rotterdam")
        }

    with TestPipeline() as p:
        out = relation_candidates.build(
            p, str(tmp_path / "in.parquet"), str(tmp_path / "r"), SpacyStageConfig()
        )
        assert_that(out, check)
