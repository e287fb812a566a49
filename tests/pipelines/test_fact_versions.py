"""The per-key fact fold in Beam equals the in-process fold, however the input is sharded."""

import random
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.testing.util import assert_that, equal_to

from pipelines.fact_versions import FACTS, UNMATCHED, FoldConfig, build
from schemas.tables import ASSERTIONS
from tests.beam_testing import direct_test_pipeline
from tests.transforms.fact_fold import fold_facts
from transforms.facts import cardinality_decisions, to_assertions
from transforms.relation_registry import RelationRegistry

PEOPLE, CITIES = ["Sam", "Ana", "Li", "Bo"], ["Leeds", "Lisbon", "Oslo"]


def _candidates(seed: int) -> tuple[list[dict], dict]:
    rng = random.Random(seed)
    observed = {f"s{i}": datetime(2023, 1 + i % 12, 1 + i % 27, tzinfo=UTC) for i in range(40)}
    cands = [
        {"segment_id": f"s{rng.randrange(40)}", "doc_id": "d", "head_text": rng.choice(PEOPLE),
         "relation": rng.choice(["live_in", "like"]), "tail_text": rng.choice(CITIES),
         "negated": rng.random() < 0.2, "confidence": 0.8, "extractor": "x"}
        for _ in range(60)
    ]  # fmt: skip
    return cands, observed


def assertion_rows(seed: int = 7) -> tuple[list[dict], dict[str, str]]:
    """The ASSERTIONS rows of seeded random candidates in a shuffled order, and the
    effective cardinality of each relation (what the stage hands the fold)."""
    cands, observed = _candidates(seed)
    registry = RelationRegistry()
    assertions, _ = to_assertions("c", cands, observed, registry)
    decisions = cardinality_decisions(assertions, registry)
    rows = [asdict(a) for a in assertions]
    random.Random(3).shuffle(rows)
    return rows, {r: d.effective for r, d in decisions.items()}


def test_beam_fold_equals_in_process_fold_for_any_sharding(tmp_path: Path):
    cands, observed = _candidates(7)
    expected, rejected, _ = fold_facts("c", cands, observed, RelationRegistry())
    rows, cardinality = assertion_rows(7)
    for shard in range(3):  # three shards in a shuffled order
        part = pa.Table.from_pylist(rows[shard::3], schema=ASSERTIONS)
        pq.write_table(part, tmp_path / f"in-{shard}.parquet")
    cfg = FoldConfig("c", str(tmp_path / "unmatched"), cardinality)
    with direct_test_pipeline() as p:
        outputs = build(p, str(tmp_path / "in-*.parquet"), str(tmp_path / "facts"), cfg)
        facts = outputs[FACTS] | "FactKey" >> beam.Map(_fact_key)
        assert_that(facts, equal_to([_fact_key(asdict(f)) for f in expected]))
        unmatched = outputs[UNMATCHED] | "Segment" >> beam.Map(lambda a: a["segment_id"])
        refs = [r.record_ref.removeprefix("segment ") for r in rejected]
        assert_that(unmatched, equal_to(refs), label="unmatched")


def _fact_key(f: dict) -> tuple:
    return f["fact_id"], f["valid_from"], f["valid_to"], tuple(f["source_segment_ids"])
