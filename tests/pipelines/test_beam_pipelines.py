"""Beam pipelines on the DirectRunner with TestPipeline and assert_that."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.testing.util import assert_that

from pipelines import entity_mentions, relation_candidates, segment_phrases
from pipelines.options import NerBackendConfig, SpacyStageConfig
from pipelines.relation_candidates import RelationStageConfig
from schemas.tables import ENTITY_MENTIONS, SEGMENT_WITH_MENTIONS, SEGMENTS
from tests.beam_testing import direct_test_pipeline
from tests.transforms.test_hf_ner import TEXTS as HF_TEXTS
from tests.transforms.test_hf_ner import build_tiny_ner_model
from transforms.ner_backends import DEFAULT_SPACY_MODEL

TEXTS = [
    "Priya Natarajan works at the Harborview Office.",
    "The Harborview Office is located in Rotterdam.",
]


def _segments(tmp_path: Path, texts: list[str] = TEXTS) -> str:
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
        for i, t in enumerate(texts)
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=SEGMENTS), tmp_path / "segments.parquet")
    return str(tmp_path / "segments.parquet")


def _mentions_match(expected: set[tuple[str, str, str]], model_tag: str):
    def check(actual: list[dict]) -> None:
        found = {(m["segment_id"], m["text"], m["label"]) for m in actual}
        assert expected <= found, f"missing {expected - found}"
        assert {m["model"] for m in actual} == {model_tag}

    return check


def test_ner_pipeline_batches_and_keeps_spans(tmp_path: Path):
    with direct_test_pipeline() as p:
        mentions = entity_mentions.build(
            p, _segments(tmp_path), str(tmp_path / "out" / "m"), NerBackendConfig()
        )
        assert_that(
            mentions,
            _mentions_match(
                {("s0", "Priya Natarajan", "PERSON"), ("s1", "Rotterdam", "GPE")},
                f"spacy:{DEFAULT_SPACY_MODEL}",
            ),
        )
    assert list((tmp_path / "out").glob("m*.parquet")), "mentions were written as Parquet shards"


def test_phrase_pipeline_writes_lemmatised_common_noun_phrases(tmp_path: Path):
    texts = ["Two American psychologists founded the society.", "The psychologist met them."]
    with direct_test_pipeline() as p:
        phrases = segment_phrases.build(
            p, _segments(tmp_path, texts), str(tmp_path / "out" / "p"), SpacyStageConfig()
        )
        assert_that(
            phrases,
            lambda rows: assert_phrases(
                rows, {("s0", "psychologist"), ("s0", "society"), ("s1", "psychologist")}
            ),
        )
    assert list((tmp_path / "out").glob("p*.parquet")), "phrases were written as Parquet shards"


def assert_phrases(rows: list[dict], expected: set[tuple[str, str]]) -> None:
    assert {(r["segment_id"], r["phrase"]) for r in rows} == expected
    assert {(r["collection"], r["doc_id"]) for r in rows} == {("c", "d")}


def _hf_mentions_are_exact(texts: list[str], model_tag: str):
    def check(actual: list[dict]) -> None:
        assert actual, "the random tiny model tags something"
        assert {m["model"] for m in actual} == {model_tag}
        for m in actual:
            text = texts[int(m["segment_id"].removeprefix("s"))]
            assert m["text"] == text[m["char_start"] : m["char_end"]]
            assert m["doc_char_start"] == m["char_start"]
            assert m["label"] in {"PER", "ORG", "LOC", "MISC"}
            assert m["entity_type"] in {"Person", "Organization", "Location", "Concept"}
        assert set(actual[0]) == set(ENTITY_MENTIONS.names)

    return check


def test_hf_ner_pipeline_runs_inference_in_batches_with_segment_keys(tmp_path: Path):
    model = build_tiny_ner_model(tmp_path / "model")
    cfg = NerBackendConfig(backend="hf", model=model, device="cpu", max_batch_size=2)
    p = direct_test_pipeline()
    mentions = entity_mentions.build(p, _segments(tmp_path, HF_TEXTS), str(tmp_path / "m"), cfg)
    assert_that(mentions, _hf_mentions_are_exact(HF_TEXTS, f"hf:{model}"))
    result = p.run()
    result.wait_until_finish()
    sizes = result.metrics().query(MetricsFilter().with_name("inference_request_batch_size"))
    batch_size = sizes["distributions"][0].committed
    assert batch_size.count >= 3 and batch_size.max == 2, "five segments in batches of two"
    assert batch_size.sum == len(HF_TEXTS)
    assert list(tmp_path.glob("m*.parquet")), "mentions were written as Parquet shards"


def test_ner_command_line_selects_the_backend(tmp_path: Path):
    model = build_tiny_ner_model(tmp_path / "model")
    argv = ["--input", _segments(tmp_path, HF_TEXTS), "--output", str(tmp_path / "m")]
    argv += ["--backend", "hf", "--model", model, "--device", "cpu"]
    with direct_test_pipeline() as p:
        entity_mentions.main(argv, test_pipeline=p)
    written = pq.read_table(list(tmp_path.glob("m*.parquet"))).to_pylist()
    _hf_mentions_are_exact(HF_TEXTS, f"hf:{model}")(written)


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

    with direct_test_pipeline() as p:
        out = relation_candidates.build(
            p, str(tmp_path / "in.parquet"), str(tmp_path / "r"), RelationStageConfig()
        )
        assert_that(out, check)
