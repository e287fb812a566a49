"""Stage 6, `fact_versions`: relation candidates -> weighed canonical assertions -> the
fold per (head, relation) key in Beam -> append-only, bitemporal fact versions.

The fold of one key reads only that key's assertions (REAL's (h, r) index), so keys are
independent: GroupByKey spreads them over workers and the result does not depend on how
the input is sharded or ordered. Cardinality is decided once for the whole collection
(it needs every key's evidence) and reaches the fold as configuration. Retractions that
close nothing come out as a second output for the quarantine: the fold yields `(tag,
row)` pairs split by tag (`pipelines.stage_io.by_tag`; the Dask runner does not tell a
ParDo's tagged outputs apart), and both writers end in one last step (`end`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import apache_beam as beam
import pyarrow as pa

from pipelines.launcher import launch
from pipelines.options import run_stage
from pipelines.outcome import StageOutcome
from pipelines.parquet_io import read_shards
from pipelines.settings import BuildSettings
from pipelines.stage_io import ReadStageInput, WriteShards, by_tag, end
from schemas.tables import ASSERTIONS, FACT_INTERVALS
from stores.data_url import join
from stores.stage_inputs import (
    collection_table,
    current_fact_versions,
    entity_names,
    fact_candidates,
    fact_inputs_digest,
)
from stores.warehouse import WarehouseStore
from transforms.facts import (
    STAGE,
    Assertion,
    FactState,
    PreparedFacts,
    fold_key,
    fold_key_of,
    plan_versions,
    prepare_facts,
    unmatched_record,
)
from transforms.ids import content_id
from transforms.relation_registry import MULTI, cardinality_rows

FACTS = "facts"
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
    """Fold the assertions of one key: `(FACTS, fact row)` and, for retractions that close
    nothing, `(UNMATCHED, assertion row)` pairs."""

    def __init__(self, cfg: FoldConfig) -> None:
        self._cfg = cfg

    def process(
        self, keyed: tuple[tuple[str, str], Iterable[dict[str, Any]]]
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        (_, relation), rows = keyed
        cardinality = self._cfg.cardinality.get(relation, MULTI)
        facts, unmatched = fold_key(
            self._cfg.collection, (Assertion(**r) for r in rows), cardinality
        )
        for fact in facts:
            yield FACTS, asdict(fact)
        for assertion in unmatched:
            yield UNMATCHED, asdict(assertion)


class FoldFacts(beam.PTransform):
    """ASSERTIONS rows -> fact intervals (output `FACTS`) and retractions that close
    nothing (output `UNMATCHED`), a dict of the two: key each assertion by (head,
    relation) under its relation's cardinality, group, fold every key."""

    def __init__(self, cfg: FoldConfig) -> None:
        super().__init__()
        self.cfg = cfg

    def expand(self, assertions: beam.PCollection) -> dict[str, beam.PCollection]:
        cardinality = self.cfg.cardinality
        folded = (
            assertions
            | "Key"
            >> beam.Map(
                lambda r: (fold_key_of(Assertion(**r), cardinality.get(r["relation"], MULTI)), r)
            )
            | "GroupByKey" >> beam.GroupByKey()
            | "Fold" >> beam.ParDo(FoldKey(self.cfg))
        )
        return by_tag(folded, (FACTS, UNMATCHED))


def build(
    p: beam.Pipeline, input_pattern: str, output_prefix: str, cfg: FoldConfig
) -> dict[str, beam.PCollection]:
    """Add the fold to `p`: read assertions, fold, write intervals and rejects."""
    read = ReadStageInput(input_pattern)
    outputs = p | "ReadAssertions" >> read | "Fold" >> FoldFacts(cfg)
    shards = read.num_files
    end(
        outputs[FACTS] | "WriteFacts" >> WriteShards(output_prefix, FACT_INTERVALS, shards),
        outputs[UNMATCHED]
        | "WriteUnmatched" >> WriteShards(cfg.unmatched_prefix, ASSERTIONS, shards),
    )
    return outputs


def run(warehouse: WarehouseStore, collection: str, settings: BuildSettings) -> StageOutcome:
    """Fold the collection's candidates (and LLM triplets when `llm_facts` is set) into new
    fact versions; skipped while its inputs and relation registry are unchanged. The whole
    `fact_versions` view is returned for its data contract."""
    registry = settings.registry()
    digest = fact_inputs_digest(warehouse, collection, settings.llm_facts)
    fingerprint = content_id(digest, registry)
    skipped = warehouse.fingerprint_unchanged(collection, STAGE, fingerprint)
    appended = rows_in = quarantined = 0
    learned: dict[str, str] = {}
    if not skipped:
        candidates = fact_candidates(warehouse, collection, settings.llm_facts)
        prepared = prepare_facts(
            collection,
            candidates,
            registry,
            warehouse.entity_of(collection),
            settings.triple_alpha,
            settings.theta_conf,
        )
        facts, unmatched = _fold(warehouse, settings, collection, prepared)
        rejected = [*prepared.rejected, *(unmatched_record(a) for a in unmatched)]
        versions = plan_versions(
            collection,
            facts,
            current_fact_versions(warehouse, collection),
            entity_names(warehouse, collection),
            datetime.now(UTC),
        )
        warehouse.append("fact_version_log", versions)
        warehouse.replace_collection(
            "relation_cardinality", collection, cardinality_rows(collection, prepared.decisions)
        )
        quarantined = warehouse.set_quarantine(collection, STAGE, rejected)
        warehouse.record_fingerprint(collection, STAGE, fingerprint)
        appended, rows_in = len(versions), len(candidates)
        learned = {r: d.cardinality for r, d in prepared.decisions.items() if d.source == "learned"}
    table = collection_table(warehouse, STAGE, collection)
    return StageOutcome(
        rows_in=rows_in,
        rows_out=appended,
        quarantined=quarantined,
        skipped=skipped,
        details={"total_versions": table.num_rows, "learned_cardinality": learned},
        contract_rows=table,
    )


def _fold(
    warehouse: WarehouseStore, settings: BuildSettings, collection: str, prepared: PreparedFacts
) -> tuple[list[FactState], list[Assertion]]:
    """The per-key fold through the launcher; facts and unmatched retractions, sorted."""
    workspace = warehouse.workspace
    folder = workspace.parquet_dir(collection, STAGE)
    unmatched_prefix = join(folder, "unmatched", "part")
    rows = pa.Table.from_pylist([asdict(a) for a in prepared.assertions], schema=ASSERTIONS)
    cardinality = {r: d.effective for r, d in prepared.decisions.items()}
    config = FoldConfig(collection, unmatched_prefix, cardinality)
    progress = workspace.progress_file(collection, STAGE)
    facts_prefix = launch(build, rows, folder, progress, settings, config, [unmatched_prefix])
    facts = [FactState(**r) for r in read_shards(facts_prefix, FACT_INTERVALS).to_pylist()]
    unmatched = [Assertion(**r) for r in read_shards(unmatched_prefix, ASSERTIONS).to_pylist()]
    return sorted(facts, key=lambda f: f.fact_id), sorted(unmatched, key=Assertion.sort_key)


def main(argv: Sequence[str] | None = None, test_pipeline: beam.Pipeline | None = None) -> None:
    """Command-line entry; see `pipelines.options.run_stage` for the flags."""
    run_stage(build, __doc__ or "", argv, test_pipeline, FoldConfig)


if __name__ == "__main__":
    main()
