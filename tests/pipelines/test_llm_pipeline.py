"""The LLM triplet pipeline on the DirectRunner against a local fake chat server:
outputs, quarantine, stats, and a re-run that makes zero calls."""

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.testing.util import assert_that

from pipelines import llm_triplets
from schemas.llm_outputs import LLM_SEGMENTS
from tests.beam_testing import direct_test_pipeline
from tests.transforms.llm.factories import first_pair_responder, make_segment
from tests.transforms.llm.fake_openai_server import FakeChatServer, chat_response
from transforms.llm.config import LLMConfig, LLMStageConfig
from transforms.llm.dofn import METRICS_NAMESPACE

TURNS = [
    {"turn_id": "S1:1", "speaker": "Assistant", "text": "Where do you work?"},
    {"turn_id": "S1:2", "speaker": "Sam Okafor", "text": "I work at Brightwater in Leeds."},
]
SEGMENTS = [
    make_segment(
        "Marcus Bennett leads Acme Corporation.",
        [("Marcus Bennett", "PERSON"), ("Acme Corporation", "ORG")],
        segment_id="a",
    ),
    make_segment("It rained all day.", segment_id="b"),
    make_segment(
        "I work at Brightwater in Leeds.",
        [("Brightwater", "ORG"), ("Leeds", "GPE")],
        segment_id="c",
        kind="turn",
        turn_id="S1:2",
        speaker="Sam Okafor",
        turns=TURNS,
    ),
    make_segment("BROKEN answer for Globex.", [("Globex", "ORG")], segment_id="d"),
]


def responder(body):
    """The fake server's answer: the first entity pair, or broken JSON for "BROKEN"."""
    if "BROKEN" in body["messages"][-1]["content"]:
        return 200, chat_response('{"facts": [')
    return first_pair_responder(body)


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    server = FakeChatServer(responder).start()
    yield server
    server.stop()


def segments_file(tmp_path: Path) -> str:
    """`SEGMENTS` as an LLM_SEGMENTS Parquet file under `tmp_path`; its path."""
    pq.write_table(pa.Table.from_pylist(SEGMENTS, schema=LLM_SEGMENTS), tmp_path / "in.parquet")
    return str(tmp_path / "in.parquet")


def _cfg(tmp_path: Path, server: FakeChatServer) -> LLMStageConfig:
    llm = LLMConfig(backend="openai", model="m", base_url=server.base_url, max_concurrency=2)
    return LLMStageConfig(cache_path=str(tmp_path / "llm_cache.duckdb"), llm=llm)


def test_pipeline_writes_rows_quarantine_and_stats_and_reruns_from_cache(tmp_path, server):
    prefix = tmp_path / "out" / "part"
    expected = {
        ("a", "Marcus Bennett", "related_to", "Acme Corporation"),
        ("c", "Assistant", "related_to", "Sam Okafor"),
    }

    def check(rows):
        found = {(r["segment_id"], r["head_text"], r["relation"], r["tail_text"]) for r in rows}
        assert found == expected

    p = direct_test_pipeline()
    segments = segments_file(tmp_path)
    assert_that(llm_triplets.build(p, segments, str(prefix), _cfg(tmp_path, server)), check)
    result = p.run()
    result.wait_until_finish()
    query = MetricsFilter().with_namespace(METRICS_NAMESPACE)
    counters = {c.key.metric.name: c.committed for c in result.metrics().query(query)["counters"]}
    triplets, quarantine, stats = llm_triplets.read_outputs(prefix)
    assert counters == stats.as_dict()
    assert triplets.num_rows == 2 and set(triplets.column("backend").to_pylist()) == {"openai"}
    assert quarantine.to_pylist() == [
        {
            "collection": "c",
            "stage": "llm_triplets",
            "source_file": "d1",
            "record_ref": "d/real_atomic_facts/v1",
            "reason": "invalid JSON: Expecting value: line 1 column 12 (char 11)",
            "raw": '{"facts": [',
        }
    ]
    first = stats.as_dict()
    assert first["segments_in"] == 4 and first["segments_gated_out"] == 1
    assert (first["llm_calls"], first["cache_hits"], first["prompt_tokens"]) == (3, 0, 33)
    assert (first["rows_out"], first["quarantined"]) == (2, 1)
    assert len(server.requests) == 3

    llm_triplets.clear_outputs(prefix)
    with direct_test_pipeline() as p:
        assert_that(llm_triplets.build(p, segments, str(prefix), _cfg(tmp_path, server)), check)
    again, quarantine_again, stats = llm_triplets.read_outputs(prefix)
    assert len(server.requests) == 3, "a re-run makes zero calls"
    assert (stats.llm_calls, stats.cache_hits, stats.prompt_tokens) == (0, 3, 0)
    assert sorted(again.column("triplet_id").to_pylist()) == sorted(
        triplets.column("triplet_id").to_pylist()
    )
    assert quarantine_again.num_rows == 1


def test_command_line_builds_with_prompt_overrides(tmp_path, server):
    prefix = tmp_path / "cli" / "part"
    argv = [
        "--input", segments_file(tmp_path), "--output", str(prefix),
        "--cache", str(tmp_path / "cache.duckdb"),
        "--backend", "openai", "--model", "m", "--base-url", server.base_url,
        "--prompt", "turn=memorai_triplets/v1", "--prompt", "chunk=",
    ]  # fmt: skip
    with direct_test_pipeline() as p:
        llm_triplets.main(argv, test_pipeline=p)
    _, _, stats = llm_triplets.read_outputs(prefix)
    assert (stats.segments_gated_out, stats.llm_calls) == (3, 1)
    (body,) = server.requests
    assert "knowledge graph extractor" in body["messages"][0]["content"]
