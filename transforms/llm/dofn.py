"""Beam DoFn of the LLM stage: a batch of segments in; triplet rows, quarantine rows and
one stats record out.

`setup` builds the `LLMExtractor` (the backend is created once per process and shared,
the cache opened); `process` hands it each batch. Counters go to Beam metrics (namespace
`kgmem.llm_triplets`) and, as a stats record on the `stats` output, to the summary file
the pipeline writes.
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

    def process(self, batch: list[dict[str, Any]]) -> Iterator[Any]:
        assert self._extractor is not None, "setup() builds the extractor before process()"
        result = self._extractor.extract_batch(batch)
        yield from result.rows
        for row in result.quarantined:
            yield beam.pvalue.TaggedOutput(QUARANTINE_TAG, row)
        stats = result.stats.as_dict()
        for name, value in stats.items():
            self._counters[name].inc(value)
        yield beam.pvalue.TaggedOutput(STATS_TAG, stats)
