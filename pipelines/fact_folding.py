"""Beam pipeline: canonical assertions -> fold per (head, relation) key -> fact intervals.

The fold of one key reads only that key's assertions (REAL's (h, r) index), so keys are
independent: GroupByKey spreads them over workers and the result does not depend on how
the input is sharded or ordered. Cardinality is decided once for the whole collection
(it needs every key's evidence) and reaches the fold as configuration. Retractions that
close nothing come out as a second, tagged output for the quarantine.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import apache_beam as beam
from apache_beam.io import parquetio

from pipelines.options import run_stage
from pipelines.stage_input import ReadStageInput
from schemas.tables import ASSERTIONS, FACT_INTERVALS
from transforms.facts import Assertion, fold_key, fold_key_of
from transforms.relation_registry import MULTI

UNMATCHED = "unmatched"


@dataclass(frozen=True)
class FoldConfig:
    """The collection (it scopes fact ids), where unmatched retractions go (a prefix apart
    from the facts'), and the effective cardinality per relation."""

    collection: str
    unmatched_prefix: str
    cardinality: dict[str, str] = field(default_factory=dict)

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--collection", required=True)
        parser.add_argument("--unmatched", required=True, help="prefix of unmatched retractions")
        parser.add_argument("--cardinality", default="{}", help='JSON {"relation": "single"}')

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> FoldConfig:
        return cls(args.collection, args.unmatched, json.loads(args.cardinality))


class FoldKey(beam.DoFn):
    """Fold the assertions of one key; unmatched retractions go to the `unmatched` output."""

    def __init__(self, cfg: FoldConfig) -> None:
        self._cfg = cfg

    def process(self, keyed: tuple[tuple[str, str], Iterable[dict[str, Any]]]) -> Iterator[Any]:
        (_, relation), rows = keyed
        cardinality = self._cfg.cardinality.get(relation, MULTI)
        facts, unmatched = fold_key(
            self._cfg.collection, (Assertion(**r) for r in rows), cardinality
        )
        for fact in facts:
            yield asdict(fact)
        for assertion in unmatched:
            yield beam.pvalue.TaggedOutput(UNMATCHED, asdict(assertion))


def build(
    p: beam.Pipeline, input_pattern: str, output_prefix: str, cfg: FoldConfig
) -> beam.pvalue.DoOutputsTuple:
    """Add the fold to `p`: read assertions, key, group, fold, write intervals and rejects."""
    cardinality = cfg.cardinality
    outputs = (
        p
        | "ReadAssertions" >> ReadStageInput(input_pattern)
        | "Key"
        >> beam.Map(
            lambda r: (fold_key_of(Assertion(**r), cardinality.get(r["relation"], MULTI)), r)
        )
        | "GroupByKey" >> beam.GroupByKey()
        | "Fold" >> beam.ParDo(FoldKey(cfg)).with_outputs(UNMATCHED, main="facts")
    )
    outputs.facts | "WriteFacts" >> parquetio.WriteToParquet(
        output_prefix, FACT_INTERVALS, file_name_suffix=".parquet"
    )
    outputs[UNMATCHED] | "WriteUnmatched" >> parquetio.WriteToParquet(
        cfg.unmatched_prefix, ASSERTIONS, file_name_suffix=".parquet"
    )
    return outputs


def run(argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None) -> None:
    """Command-line entry; see `pipelines.options.run_stage` for the flags."""
    run_stage(build, __doc__ or "", argv, test_pipeline, FoldConfig)


if __name__ == "__main__":
    run()
