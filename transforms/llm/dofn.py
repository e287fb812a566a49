"""Beam DoFn of the LLM stage: a batch of segments in; triplet rows, quarantine rows and
one stats record out, each as a `(tag, value)` pair (`ROWS_TAG`, `QUARANTINE_TAG`,
`STATS_TAG`) that the pipeline splits by tag: Beam's Dask runner does not tell a ParDo's
tagged outputs apart (`pipelines.stage_io`).

`setup` builds the `LLMExtractor` (the backend is created once per process and shared,
the cache opened); `process` hands it each batch. Counters go to Beam metrics (namespace
`kgmem.llm_triplets`) and, as the stats record, to the summary file the pipeline writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from apache_beam.metrics import Metrics

from transforms.llm.batch import LLMExtractor
from transforms.llm.config import LLMStageConfig
from transforms.llm.extract import STAGE
from transforms.llm.stats import LLMStats

ROWS_TAG = "rows"
QUARANTINE_TAG = "quarantine"
STATS_TAG = "stats"
METRICS_NAMESPACE = f"kgmem.{STAGE}"


class LLMTripletDoFn(beam.DoFn):
    """Extract LLM triplets from batches of `LLM_SEGMENTS` rows."""

    def __init__(self, cfg: LLMStageConfig) -> None:
        self._cfg = cfg
        self._extractor: LLMExtractor | None = None
        self._counters = {
            name: Metrics.counter(METRICS_NAMESPACE, name) for name in LLMStats().as_dict()
        }

    def setup(self) -> None:
        self._extractor = LLMExtractor.from_config(self._cfg)

    def process(self, batch: list[dict[str, Any]]) -> Iterator[tuple[str, Any]]:
        assert self._extractor is not None, "setup() builds the extractor before process()"
        result = self._extractor.extract_batch(batch)
        for row in result.rows:
            yield ROWS_TAG, row
        for row in result.quarantined:
            yield QUARANTINE_TAG, row
        stats = result.stats.as_dict()
        for name, value in stats.items():
            self._counters[name].inc(value)
        yield STATS_TAG, stats
