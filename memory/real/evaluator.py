"""REAL's semantic evaluator: S(p) = (S_QR, S_LC, S_AS) for a batch of paths.

Two evaluators share one interface (`score(paths) -> list[Scores]`):

- `EmbeddingEvaluator` (default, no LLM). The paper's evaluator is an LLM with an
  unpublished rubric; this one reads the same three questions off embeddings:
  S_QR = cosine (clipped to [0, 1]) of the query to the path's linearized statements
  (the normalised centroid of its hops' statement vectors, stored per fact, so scoring
  needs no encoder call); S_LC = 1 for at most one hop, else the weakest link between
  consecutive hops, (1 + cosine of their statements) / 2, halved where their valid
  intervals do not overlap (two facts never true together make no chain);
  S_AS = S_QR, halved when the question expects an answer type ("which city" →
  Location) that the path's end entity does not have: a path is sufficient for its root's
  sub-question when it is relevant and ends on a candidate answer. A bare root scores
  (0, 1, 0), so a root with any relevant edge expands.
- `LLMEvaluator`: one chat call per batch (the paper batches the current path and its up
  to m expansions into one call per beam), through the existing backends
  (`transforms/llm`), the call cache and the runner's retries. The answer must validate
  as `schemas.real_evaluator.PathScores`; a failed call, or a path the answer leaves out,
  falls back on the embedding scores (counted in `failures`). Calls and tokens are
  counted in `stats`, cache hits cost none.

Confidence is not part of S(p): it weighs the scalar S(P|q) (`paths.path_score`).
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path as FilePath
from typing import Any, Protocol

import numpy as np
from pydantic import ValidationError

from memory.real.paths import Hop, Path, Scores
from memory.snapshot_view import SnapshotView
from schemas.real_evaluator import PathScores
from transforms.llm.backends import shared_backend
from transforms.llm.base import CompletionRequest
from transforms.llm.cache import LLMCache
from transforms.llm.config import LLMConfig
from transforms.llm.prompts import _schema_json
from transforms.llm.runner import LLMRunner, RetryPolicy
from transforms.llm.stats import LLMStats

TYPE_MISMATCH = 0.5
"""S_AS factor for a path ending on an entity of another type than the question asks for."""
DISJOINT_TIME = 0.5
"""S_LC factor for consecutive hops whose valid intervals do not overlap."""
EVALUATORS = ("embedding", "llm")
PROMPT_VERSION = "real_path_evaluator/v1"


class Evaluator(Protocol):
    def score(self, paths: Sequence[Path]) -> list[Scores]: ...


class EmbeddingEvaluator:
    """Scores from the query vector, hop statement vectors, intervals and entity types.

    A path's scores are kept per evaluator (one per query): the beam search scores each
    beam again with its expansions. A path `Path.extend` built is scored from its parent's
    running state, the sum of its statement vectors and its weakest link: the sum adds the
    new hop's vector to the parent's, the additions `centroid_of` makes in the same order,
    and the weakest link is the smaller of the parent's and the new link, so the scores
    are bit for bit those of the path scored whole (~735 paths a query at 100k facts)."""

    def __init__(self, query_vector: np.ndarray, expected_type: str | None) -> None:
        self.query_vector = np.asarray(query_vector, dtype=np.float32)
        self.expected_type = expected_type
        self._scores: dict[Path, Scores] = {}
        self._state: dict[Path, tuple[np.ndarray | None, int, float]] = {}
        """Per scored path: (the sum of its hop vectors, None where their dtypes differ
        or it has none; how many; its coherence)."""

    def score(self, paths: Sequence[Path]) -> list[Scores]:
        return [self.score_one(path) for path in paths]

    def score_one(self, path: Path) -> Scores:
        known = self._scores.get(path)
        if known is None:
            known = self._score(path)
            self._scores[path] = known
        return known

    def _score(self, path: Path) -> Scores:
        if not path.hops:
            self._state[path] = (None, 0, 1.0)
            return Scores(0.0, 1.0, 0.0)
        total, count, weakest = self._running(path)
        self._state[path] = (total, count, weakest)
        relevance = 0.0
        if count:
            if total is None:
                centroid = centroid_of([hop.vector for hop in path.hops if hop.vector is not None])
            else:
                centroid = total / count
            norm = float(np.sqrt(centroid.dot(centroid)))
            if norm > 0:
                relevance = max(0.0, min(1.0, float(centroid @ self.query_vector) / norm))
        end_type = path.hops[-1].target_type
        fits = self.expected_type is None or end_type == self.expected_type
        sufficiency = relevance * (1.0 if fits else TYPE_MISMATCH)
        return Scores(relevance, weakest, sufficiency)

    def _running(self, path: Path) -> tuple[np.ndarray | None, int, float]:
        """(vector sum, count, coherence) of `path`, from its parent's state when that was
        scored, else from its hops (`centroid_of`'s sum, `coherence`)."""
        parent = self._state.get(path.parent) if path.parent is not None else None
        if parent is None:
            vectors = [hop.vector for hop in path.hops if hop.vector is not None]
            mixed = any(v.dtype != vectors[0].dtype for v in vectors)
            total = None if mixed or not vectors else vectors[0]
            for vector in vectors[1:] if total is not None else ():
                total = total + vector
            return total, len(vectors), coherence(path.hops)
        total, count, weakest = parent
        hop = path.hops[-1]
        if len(path.hops) > 1:
            weakest = min(weakest, link_strength(path.hops[-2], hop))
        vector = hop.vector
        if vector is None:
            return total, count, weakest
        if not count:
            return vector, 1, weakest
        if total is None or total.dtype != vector.dtype:
            return None, count + 1, weakest
        return total + vector, count + 1, weakest


def centroid_of(vectors: Sequence[np.ndarray]) -> np.ndarray:
    """`np.mean(vectors, axis=0)`, bit for bit, at a fifth of its cost for a path's few
    hops: NumPy's mean over the first axis adds the rows one after the other and divides
    once, which is what the sum here does (vectors of one dtype; mixed ones go through
    `np.mean`, which converts them all first)."""
    first = vectors[0]
    if any(v.dtype != first.dtype for v in vectors):
        return np.mean(vectors, axis=0)
    total = first
    for vector in vectors[1:]:
        total = total + vector
    return total / len(vectors)


def coherence(hops: Sequence[Hop]) -> float:
    """The weakest consecutive link (`link_strength`), 1 for at most one hop."""
    return min([1.0, *(link_strength(a, b) for a, b in itertools.pairwise(hops))])


def link_strength(a: Hop, b: Hop) -> float:
    """(1 + cos) / 2 of two consecutive hops' statements, halved for disjoint valid
    intervals (the cosine clipped to [-1, 1] as Python floats: `np.clip` of a NumPy
    scalar gives the same value at five times the cost)."""
    link = 1.0
    if a.vector is not None and b.vector is not None:
        link = (1.0 + min(1.0, max(-1.0, float(a.vector @ b.vector)))) / 2.0
    if not overlaps(a, b):
        link *= DISJOINT_TIME
    return link


def overlaps(a: Hop, b: Hop) -> bool:
    """Whether two half-open valid intervals [from, to) share a moment (None: unbounded)."""
    a_before_b_ends = a.valid_from is None or b.valid_to is None or a.valid_from < b.valid_to
    b_before_a_ends = b.valid_from is None or a.valid_to is None or b.valid_from < a.valid_to
    return a_before_b_ends and b_before_a_ends


INSTRUCTION = (
    "You score paths through a memory graph for a question. Each path starts at a root "
    "entity and follows facts written `head --[relation, valid from..to, confidence]--> "
    "tail`. For every numbered path give three scores between 0 and 1: relevance (how "
    "related the path is to the question), coherence (whether its hops form a plausible, "
    "consistent chain; a bare entity or a single hop is coherent), sufficiency (how far the "
    "path alone answers the part of the question about its root entity: an attribute "
    "value, a causal link or a temporal event). Answer as JSON "
    '{"scores": [{"path": n, "relevance": x, "coherence": y, "sufficiency": z}, ...]} '
    "with one entry per path."
)
EXAMPLE = (
    "Question: Which country is Mira Holt's lab in?\n"
    "Root entity: Mira Holt\n"
    "Paths:\n"
    "0: Mira Holt\n"
    "1: Mira Holt --[works_at, 2019-01-01..now, 0.95]--> Vela Lab\n"
    "2: Mira Holt --[works_at, 2019-01-01..now, 0.95]--> Vela Lab --[located_in, ?..now, 0.9]"
    "--> Norway\n"
    "3: Mira Holt --[likes, ?..now, 0.9]--> Jazz",
    '{"scores": [{"path": 0, "relevance": 0.2, "coherence": 1.0, "sufficiency": 0.0}, '
    '{"path": 1, "relevance": 0.7, "coherence": 1.0, "sufficiency": 0.4}, '
    '{"path": 2, "relevance": 0.9, "coherence": 0.9, "sufficiency": 1.0}, '
    '{"path": 3, "relevance": 0.1, "coherence": 1.0, "sufficiency": 0.0}]}',
)


def evaluation_request(query: str, paths: Sequence[Path]) -> CompletionRequest:
    """The batched evaluation request for `paths` (all from one root)."""
    lines = [f"Question: {query}", f"Root entity: {paths[0].root_name}", "Paths:"]
    lines += [f"{i}: {path.serialized()}" for i, path in enumerate(paths)]
    return CompletionRequest(
        prompt_version=PROMPT_VERSION,
        instruction=INSTRUCTION,
        examples=(EXAMPLE,),
        input="\n".join(lines),
        schema_json=_schema_json(PathScores),
        max_tokens=32 + 40 * len(paths),
    )


def parse_scores(text: str, count: int) -> dict[int, Scores]:
    """The valid scores of an answer by path number (paths out of range are ignored)."""
    answer = PathScores.model_validate(json.loads(text))
    return {
        s.path: Scores(s.relevance, s.coherence, s.sufficiency)
        for s in answer.scores
        if s.path < count
    }


class LLMEvaluator:
    """One LLM call per batch of paths; embedding scores where the LLM gives none."""

    def __init__(self, query: str, runner: LLMRunner, fallback: EmbeddingEvaluator) -> None:
        self.query = query
        self.runner = runner
        self.fallback = fallback
        self.stats = LLMStats()
        self.failures = 0

    def score(self, paths: Sequence[Path]) -> list[Scores]:
        if not paths:
            return []
        (outcome,) = self.runner.run([evaluation_request(self.query, paths)], self.stats)
        scored: dict[int, Scores] = {}
        if outcome.completion is not None:
            try:
                scored = parse_scores(outcome.completion.text, len(paths))
            except (ValueError, ValidationError):
                scored = {}
        if len(scored) < len(paths):
            self.failures += 1
        return [scored.get(i) or self.fallback.score_one(p) for i, p in enumerate(paths)]


def llm_config(options: Mapping[str, Any]) -> LLMConfig:
    """The backend the `llm_*` options name (environment fallbacks as for extraction)."""
    return LLMConfig(
        backend=options.get("llm_backend"),
        model=options.get("llm_model"),
        base_url=options.get("llm_base_url"),
        response_format=options.get("llm_response_format", "json_schema"),
        timeout_s=float(options.get("llm_timeout_s", 60.0)),
        max_attempts=int(options.get("llm_max_attempts", 2)),
    ).resolve_from_env()


def cache_path(view: SnapshotView, options: Mapping[str, Any]) -> FilePath:
    """`llm_cache` option, else `$KGMEM_LLM_CACHE`, else the workspace's cache file."""
    configured = options.get("llm_cache") or os.environ.get("KGMEM_LLM_CACHE")
    if configured:
        return FilePath(configured)
    with view.reading() as con:
        (warehouse,) = con.execute(
            "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
        ).fetchone()
    return FilePath(warehouse).parent / "llm_cache.duckdb"


def evaluator_for(
    view: SnapshotView,
    query: str,
    options: Mapping[str, Any],
    query_vector: np.ndarray,
    expected_type: str | None,
) -> EmbeddingEvaluator | LLMEvaluator:
    """The evaluator the `evaluator` option names ("embedding" by default)."""
    kind = options.get("evaluator", "embedding")
    if kind not in EVALUATORS:
        raise ValueError(f"unknown evaluator {kind!r}; choose one of {EVALUATORS}")
    embedding = EmbeddingEvaluator(query_vector, expected_type)
    if kind == "embedding":
        return embedding
    cfg = llm_config(options)
    runner = LLMRunner(
        shared_backend(cfg),
        LLMCache(cache_path(view, options)),
        max_concurrency=1,
        timeout_s=cfg.timeout_s,
        retry=RetryPolicy(cfg.max_attempts, cfg.backoff_base_s, cfg.backoff_max_s),
    )
    return LLMEvaluator(query, runner, embedding)
