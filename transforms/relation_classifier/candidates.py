"""Relation candidates from a classifier backend, as a pure function and as a Beam DoFn.

Per segment: the pairs within the window (`pairs.segment_pairs`) are classified; a pair
takes its most probable class (KGERMAR Algorithm 1: r = F_r(...)); pairs whose class is
`none`, or whose probability is not above `min_confidence` (the paper's theta_min), are
dropped. The rest become RELATION_CANDIDATES rows with the inventory label as relation,
the calibrated probability as confidence, `pattern` = "pair_window" and `extractor` =
"classifier/<backend>:<model>". An inverse class (`PartOf^-1`) is emitted with head and
tail swapped; when both directions of one mention pair yield the same triple, the more
confident row stays. A classifier sees no negation, so `negated` is always false, and
first-person subjects are not resolved to the speaker (that is the dependency
extractor's pattern).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apache_beam as beam
from apache_beam.utils.shared import Shared

from transforms.ids import content_id
from transforms.pair_window import DEFAULT_WINDOW
from transforms.relation_classifier.backend import RelationBackend
from transforms.relation_classifier.huggingface import (
    DEFAULT_CONTEXT_TOKENS,
    DEFAULT_MARKERS,
    HuggingFaceBackend,
)
from transforms.relation_classifier.pairs import segment_pairs
from transforms.relation_classifier.probe import DEFAULT_NAME, ProbeBackend, artifact_dir
from transforms.relation_inventory import TACRED_TO_KGERMAR, undirected
from transforms.workspace_home import default_home

PATTERN = "pair_window"
BACKENDS = ("probe", "hf")


@dataclass(frozen=True)
class ClassifierConfig:
    """Which classifier runs and how pairs are formed and kept.

    `backend` "probe": `model` is an artifact name under `<home>/models/relation_classifier/`
    or an artifact folder. `backend` "hf": `model` is a Hugging Face model id or path, with
    `label_map` (model label -> (inventory label, reversed); TACRED's by default), entity
    `markers`, `context_tokens` and a softmax `temperature`.
    """

    backend: str = "probe"
    model: str = DEFAULT_NAME
    home: str | None = None
    window: int = DEFAULT_WINDOW
    min_confidence: float = 0.0
    max_batch_size: int = 32
    label_map: Mapping[str, tuple[str, bool]] = field(default_factory=lambda: TACRED_TO_KGERMAR)
    markers: tuple[str, ...] = DEFAULT_MARKERS
    context_tokens: int = DEFAULT_CONTEXT_TOKENS
    temperature: float = 1.0

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"unknown classifier backend {self.backend!r}; use one of {BACKENDS}")


def load_backend(cfg: ClassifierConfig) -> RelationBackend:
    """The backend `cfg` names, loaded (the probe from its artifact folder)."""
    if cfg.backend == "hf":
        return HuggingFaceBackend(
            cfg.model,
            label_map=cfg.label_map,
            markers=cfg.markers,
            context_tokens=cfg.context_tokens,
            temperature=cfg.temperature,
            batch_size=cfg.max_batch_size,
        )
    folder = Path(cfg.model)
    if not folder.is_dir():
        folder = artifact_dir(cfg.home or default_home(), cfg.model)
    return ProbeBackend(folder, cfg.max_batch_size)


def classify_segments(
    backend: RelationBackend,
    segments: Iterable[Mapping[str, Any]],
    window: int = DEFAULT_WINDOW,
    min_confidence: float = 0.0,
) -> Iterator[dict[str, Any]]:
    """RELATION_CANDIDATES rows for `segments` (SEGMENT_WITH_MENTIONS rows)."""
    todo = []
    for segment in segments:
        item = segment_pairs(segment["text"], segment["mentions"] or [], window)
        if item.pairs:
            todo.append((segment, item))
    matrices = backend.probabilities([item for _, item in todo])
    for (segment, item), probabilities in zip(todo, matrices, strict=True):
        best: dict[str, dict[str, Any]] = {}
        for (head, tail), row in zip(item.mentions, probabilities, strict=True):
            top = int(row.argmax())
            label, confidence = backend.classes[top], float(row[top])
            if label == backend.none_label or confidence <= min_confidence:
                continue
            relation, reverse = undirected(label)
            if reverse:
                head, tail = tail, head
            candidate = _candidate(segment, head, tail, relation, confidence, backend.extractor)
            kept = best.get(candidate["candidate_id"])
            if kept is None or kept["confidence"] < candidate["confidence"]:
                best[candidate["candidate_id"]] = candidate
        yield from best.values()


def _candidate(
    segment: Mapping[str, Any],
    head: Mapping[str, Any],
    tail: Mapping[str, Any],
    relation: str,
    confidence: float,
    extractor: str,
) -> dict[str, Any]:
    return {
        "candidate_id": content_id(
            segment["segment_id"], head["char_start"], relation, tail["char_start"], extractor
        ),
        "collection": segment["collection"],
        "segment_id": segment["segment_id"],
        "doc_id": segment["doc_id"],
        "head_text": head["text"],
        "head_start": head["char_start"],
        "head_end": head["char_end"],
        "relation": relation,
        "tail_text": tail["text"],
        "tail_start": tail["char_start"],
        "tail_end": tail["char_end"],
        "negated": False,
        "confidence": round(confidence, 4),
        "pattern": PATTERN,
        "extractor": extractor,
    }


class ClassifierRelationDoFn(beam.DoFn):
    """Beam DoFn: a batch of segments with mentions in, classified candidates out; the
    backend is loaded once per worker process (`Shared`: every DoFn instance of the process,
    one per bundle thread, acquires the same loaded backend in `setup`)."""

    def __init__(self, cfg: ClassifierConfig) -> None:
        self._cfg = cfg
        self._shared = Shared()
        self._backend: RelationBackend | None = None

    def setup(self) -> None:
        self._backend = self._shared.acquire(lambda: load_backend(self._cfg), tag=repr(self._cfg))

    def process(self, batch: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        assert self._backend is not None, "setup() loads the backend before process()"
        yield from classify_segments(
            self._backend, batch, self._cfg.window, self._cfg.min_confidence
        )
