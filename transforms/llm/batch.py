"""One batch of segments through the whole LLM step, without Beam: gate, calls (cache
first), extraction. The DoFn wraps it; evaluation and benchmarks call it directly."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from transforms.llm.backends import shared_backend
from transforms.llm.cache import LLMCache
from transforms.llm.config import LLMStageConfig
from transforms.llm.extract import extract
from transforms.llm.gate import GateConfig, plan_calls
from transforms.llm.matching import DEFAULT_FUZZY_THRESHOLD
from transforms.llm.runner import LLMRunner, RetryPolicy
from transforms.llm.stats import LLMStats


@dataclass
class BatchResult:
    """`LLM_TRIPLETS` rows, quarantine rows (`LLM_QUARANTINE`) and the batch's counters."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    quarantined: list[dict[str, str]] = field(default_factory=list)
    stats: LLMStats = field(default_factory=LLMStats)


class LLMExtractor:
    """Extracts triplets from batches of `LLM_SEGMENTS` rows with one runner."""

    def __init__(
        self,
        runner: LLMRunner,
        gate: GateConfig,
        *,
        temperature: float = 0.0,
        fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD,
    ) -> None:
        self.runner = runner
        self.gate = gate
        self.temperature = temperature
        self.fuzzy_threshold = fuzzy_threshold

    @classmethod
    def from_config(cls, cfg: LLMStageConfig) -> LLMExtractor:
        """The extractor `cfg` describes, on this process's shared backend."""
        llm = cfg.llm
        runner = LLMRunner(
            shared_backend(llm.resolve_from_env()),
            LLMCache(cfg.cache_path),
            max_concurrency=llm.max_concurrency,
            timeout_s=llm.timeout_s,
            retry=RetryPolicy(llm.max_attempts, llm.backoff_base_s, llm.backoff_max_s),
        )
        return cls(
            runner, cfg.gate, temperature=llm.temperature, fuzzy_threshold=cfg.fuzzy_threshold
        )

    def extract_batch(self, segments: Iterable[Mapping[str, Any]]) -> BatchResult:
        """Rows, quarantine rows and counters of `segments`."""
        segments = list(segments)
        result = BatchResult(stats=LLMStats(segments_in=len(segments)))
        plan = plan_calls(segments, self.gate, self.temperature)
        result.stats.segments_gated_out = sum(plan.gated_out.values())
        outcomes = self.runner.run([call.request for call in plan.calls], result.stats)
        backend = self.runner.backend
        for call, outcome in zip(plan.calls, outcomes, strict=True):
            extraction = extract(call, outcome, backend.name, backend.model, self.fuzzy_threshold)
            result.rows += extraction.rows
            collection = call.segment["collection"]
            result.quarantined += [q.as_row(collection) for q in extraction.quarantined]
        result.stats.rows_out = len(result.rows)
        result.stats.quarantined = len(result.quarantined)
        return result
