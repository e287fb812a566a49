"""Counters of an LLM extraction run, summable across batches and workers.

The DoFn reports each batch's counters as Beam metrics and as a stats record; the pipeline
sums the records into one JSON file that the Dagster asset reads back into its metadata
(Beam metrics are not readable from every runner's result, the file is).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields


@dataclass
class LLMStats:
    """What a run did.

    `requests`: calls the gate asked for; `cache_hits`: of those, answered from the cache
    (or by an identical request of the same batch); `llm_calls`: requests sent to the
    backend, retries included; `retries`: of those, repeats after a transient failure;
    `failed_calls`: requests still failing after every attempt (quarantined);
    `prompt_tokens` / `completion_tokens`: spent by this run's calls (cache hits cost
    none); `rows_out` / `quarantined`: triplet rows written and records set aside.
    """

    segments_in: int = 0
    segments_gated_out: int = 0
    requests: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    failed_calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    rows_out: int = 0
    quarantined: int = 0

    def add(self, other: LLMStats) -> LLMStats:
        """Add `other`'s counters to these; returns self."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        return self

    def as_dict(self) -> dict[str, int]:
        """The counters by name."""
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, int]) -> LLMStats:
        """Counters from `as_dict` output (unknown names are an error)."""
        return cls(**values)


def sum_stats(records: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Sum stats records (a Beam combiner: associative, and zeros for no input)."""
    total = LLMStats()
    for record in records:
        total.add(LLMStats.from_dict(record))
    return total.as_dict()
