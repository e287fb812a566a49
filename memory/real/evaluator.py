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

The embedding evaluator scores the hops of many parents in one pass of array operations
(`EmbeddingEvaluator.score_many`, a search depth's ~125 candidates at once), bit for bit
as path by path: vector sums and centroids are elementwise, each row's dot products are
BLAS's dot of two vectors (`np.vecdot`, as `ndarray.dot` and `@` of one row take them),
and the comparisons are those `min`, `max` and `overlaps` make.
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

from memory.real.paths import Hop, Path, Scores, new_scores
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
STATE = "_embedding_evaluation"
Scored = tuple[float, float, float, Any]
"""A path's (S_QR, S_LC, S_AS) and the state `EmbeddingEvaluator.adopt` keeps on it once
the path is built."""
_new = object.__new__
_set = object.__setattr__
"""The key under which `EmbeddingEvaluator` keeps a path's scores in the path's
`__dict__` (outside its compared fields)."""
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
    are bit for bit those of the path scored whole (~700 paths a query at 100k facts).
    Scores and state are kept on the path object itself (`STATE`, with the evaluator
    that computed them), not in a dict keyed by path: a path's hash folds every hop's, and
    most paths a search scores are dropped unhashed. An equal path built apart is scored
    again, to the same values."""

    def __init__(self, query_vector: np.ndarray, expected_type: str | None) -> None:
        self.query_vector = np.asarray(query_vector, dtype=np.float32)
        self.expected_type = expected_type

    def _known(self, path: Path) -> tuple[Any, ...] | None:
        """(self, scores, vector sum (None where the hop vectors' dtypes differ or it has
        none), how many, coherence) of a path this evaluator scored, else None."""
        known = path.__dict__.get(STATE)
        return known if known is not None and known[0] is self else None

    def score(self, paths: Sequence[Path]) -> list[Scores]:
        """`score_one` of each path; the paths not scored yet that extend one scored
        parent by a hop (a beam's expansions, its repairs) are scored together
        (`_score_children`)."""
        fresh = [p for p in paths if self._known(p) is None]
        if len(fresh) > 1:
            parent = fresh[0].parent
            if (
                parent is not None
                and self._known(parent) is not None
                and all(p.parent is parent for p in fresh)
            ):
                self._score_children(parent, fresh)
        return [self.score_one(path) for path in paths]

    def _score_children(self, parent: Path, children: list[Path]) -> None:
        """Score `children`, each `parent` and one hop more, together (`_score_hops`)."""
        states = self._score_hops(parent, [child.hops[-1] for child in children])
        if states is not None:
            for child, state in zip(children, states, strict=True):
                child.__dict__[STATE] = state

    def score_hops(self, parent: Path, hops: Sequence[Hop]) -> list[Scored]:
        """Per hop, the scores of `parent.extend(hop)` without building it where the hops
        can be scored together (`_score_hops`): (S_QR, S_LC, S_AS, a state for `adopt`).
        A search builds the paths it keeps only."""
        if self._known(parent) is None:
            self.score_one(parent)
        states = self._score_hops(parent, hops)
        if states is None:
            states = []
            for hop in hops:
                child = parent.extend(hop)
                self.score_one(child)
                states.append(child.__dict__[STATE])
        return [
            (state[1].relevance, state[1].coherence, state[1].sufficiency, state)
            for state in states
        ]

    def score_many(self, items: Sequence[tuple[Path, Sequence[Hop]]]) -> list[list[Scored]]:
        """`score_hops` of each (parent, hops), the hops of all parents scored together
        where they can be (`_score_rows`: a search level's ~25 beams at once), else
        parent by parent."""
        for parent, _ in items:
            if self._known(parent) is None:
                self.score_one(parent)
        results: list[list[Scored] | None] = [None] * len(items)
        groups: dict[tuple[bool, Any], list[int]] = {}
        for i, (parent, hops) in enumerate(items):
            key = self._row_group(parent, hops)
            if key is None:
                results[i] = self.score_hops(parent, hops)
            else:
                groups.setdefault(key, []).append(i)
        for (summed, _), members in groups.items():
            scored = self._score_rows([items[i] for i in members], summed)
            for i, part in zip(members, scored, strict=True):
                results[i] = part
        return results  # type: ignore[return-value]

    def adopt(self, path: Path, scored: Scored) -> Scores:
        """Keep on `path` (the parent `score_hops` or `score_many` scored, extended by
        the hop) the scores and state they gave for it; its scores."""
        relevance, coherence, sufficiency, state = scored
        if state[0] is self:  # a state `_score_hops` or `_score` made
            path.__dict__[STATE] = state
            return state[1]
        _, sums, row, count = state
        scores = new_scores(relevance, coherence, sufficiency)
        total = sums[row] if sums is not None else path.hops[-1].vector
        path.__dict__[STATE] = (self, scores, total, count, coherence)
        return scores

    def _row_group(self, parent: Path, hops: Sequence[Hop]) -> tuple[bool, Any] | None:
        """Which rows of `_score_rows` the hops of `parent` join: (whether the parent has a
        vector sum, the rows' dtype), None where they cannot (no hops, a hop without a
        vector, a dtype that differs from the sum's, or from the previous hop's)."""
        if not hops:
            return None
        _, _, total, count, _ = self._known(parent)
        if count and total is None:
            return None
        first = hops[0].vector
        if first is None:
            return None
        dtype = first.dtype
        for hop in hops:
            vector = hop.vector
            if vector is None or vector.dtype != dtype:
                return None
        if count and total.dtype != dtype:
            return None
        previous = parent.hops[-1] if parent.hops else None
        if previous is not None and previous.vector is not None and previous.vector.dtype != dtype:
            return None
        return bool(count), dtype

    def _score_rows(
        self, items: list[tuple[Path, Sequence[Hop]]], summed: bool
    ) -> list[list[Scored]]:
        """`_score_hops` of each (parent, hops) of one `_row_group`, on the rows of all
        of them stacked: the sums, centroids and dot products are the same per-row
        operations (`_score_hops`), each row with its own parent's sum, count and
        previous hop."""
        parents = [self._known(parent) for parent, _ in items]
        sizes = [len(hops) for _, hops in items]
        owner = np.repeat(np.arange(len(items)), sizes)
        stacked = np.array([hop.vector for _, hops in items for hop in hops])
        # each parent's sum plus its hops' vectors (the vectors alone under a bare root)
        sums = np.array([state[2] for state in parents])[owner] + stacked if summed else stacked
        counts = np.array([state[3] + 1 for state in parents], stacked.dtype)[owner]
        centroids = sums / counts[:, None]
        norms = np.sqrt(np.vecdot(centroids, centroids)).astype(np.float64)
        dots = np.vecdot(centroids, self.query_vector).astype(np.float64)
        # S_QR: max(0.0, min(1.0, dot / norm)) where the norm is positive, else 0.0, each
        # comparison as Python's `min` and `max` make it (on the same doubles)
        positive = norms > 0
        cosine = np.divide(dots, norms, out=np.zeros_like(dots), where=positive)
        cosine = np.where(cosine < 1.0, cosine, 1.0)
        relevance = np.where(positive & (cosine > 0.0), cosine, 0.0)
        fits = [
            self.expected_type is None or hop.target_type == self.expected_type
            for _, hops in items
            for hop in hops
        ]
        sufficiency = np.where(fits, relevance, relevance * TYPE_MISMATCH).tolist()
        relevance = relevance.tolist()
        # S_LC: min(parent's, link_strength(previous, hop)) for parents with hops
        weakest = np.array([state[4] for state in parents])[owner]
        linked = [
            i
            for i, (parent, _) in enumerate(items)
            if parent.hops and parent.hops[-1].vector is not None
        ]
        link = np.ones(len(stacked))
        if linked:
            is_linked = np.zeros(len(items), bool)
            is_linked[linked] = True
            rows = np.flatnonzero(is_linked[owner])
            previous = np.array([items[i][0].hops[-1].vector for i in linked])
            at = np.full(len(items), -1)
            at[linked] = np.arange(len(linked))
            cosines = np.vecdot(stacked[rows], previous[at[owner[rows]]]).astype(np.float64)
            cosines = np.where(cosines > -1.0, cosines, -1.0)
            link[rows] = (1.0 + np.where(cosines < 1.0, cosines, 1.0)) / 2.0
        disjoint = []  # rows whose hop does not overlap its parent's last (an open one does)
        row = 0
        for parent, hops in items:
            if parent.hops:
                start, stop = parent.hops[-1].valid_from, parent.hops[-1].valid_to
                if start is not None or stop is not None:
                    for i, hop in enumerate(hops, row):  # not overlaps(previous, hop)
                        if not (
                            (start is None or hop.valid_to is None or start < hop.valid_to)
                            and (hop.valid_from is None or stop is None or hop.valid_from < stop)
                        ):
                            disjoint.append(i)
            row += len(hops)
        if disjoint:
            link[disjoint] *= DISJOINT_TIME
        has_previous = np.repeat([bool(parent.hops) for parent, _ in items], sizes)
        coherence = np.where(has_previous & (link < weakest), link, weakest).tolist()
        results: list[list[Scored]] = []
        rows = sums if summed else None
        row = 0
        for size, state in zip(sizes, parents, strict=True):
            count = state[3] + 1
            stop = row + size
            results.append(
                [
                    (relevance[i], coherence[i], sufficiency[i], (None, rows, i, count))
                    for i in range(row, stop)
                ]
            )
            row = stop
        return results

    def _score_hops(self, parent: Path, hops: Sequence[Hop]) -> list[tuple[Any, ...]] | None:
        """The states (self, scores, vector sum, count, coherence) of `parent` extended by
        each of `hops`, as `_score` computes them one by one, bit for bit: the vector sums
        and centroids are the same elementwise operations on stacked rows, and
        `np.vecdot` takes each row's dot product as `ndarray.dot` and `@` of one row do
        (BLAS's dot of two vectors, a row at a time); the rest is the same Python
        arithmetic. None where a hop has no vector, or one of another dtype than the
        parent's sum (left to `_score`)."""
        _, _, total, count, weakest = self._known(parent)
        vectors = [hop.vector for hop in hops]
        if not vectors or any(v is None for v in vectors) or (count and total is None):
            return None if vectors else []
        dtype = vectors[0].dtype if not count else total.dtype
        if any(v.dtype != dtype for v in vectors):
            return None
        stacked = np.array(vectors)  # np.stack's rows, without its Python-level checks
        sums = total + stacked if count else stacked
        count += 1
        centroids = sums / count
        norms = np.sqrt(np.vecdot(centroids, centroids)).tolist()
        dots = np.vecdot(centroids, self.query_vector).tolist()
        previous = parent.hops[-1] if parent.hops else None
        links = start = stop = None
        if previous is not None:
            start, stop = previous.valid_from, previous.valid_to
            if previous.vector is not None:
                links = np.vecdot(stacked, previous.vector).tolist()
        expected = self.expected_type
        states = []
        for i, hop in enumerate(hops):
            relevance, norm = 0.0, norms[i]
            if norm > 0:  # max(0.0, min(1.0, cosine)), as the comparisons they make
                relevance = dots[i] / norm
                relevance = relevance if relevance < 1.0 else 1.0
                relevance = relevance if relevance > 0.0 else 0.0
            coherence = weakest
            if previous is not None:  # min(weakest, link_strength(previous, hop))
                link = 1.0
                if links is not None:  # (1 + min(1.0, max(-1.0, cosine))) / 2
                    cosine = links[i]
                    cosine = cosine if cosine > -1.0 else -1.0
                    link = (1.0 + (cosine if cosine < 1.0 else 1.0)) / 2.0
                if not (
                    (start is None or hop.valid_to is None or start < hop.valid_to)
                    and (hop.valid_from is None or stop is None or hop.valid_from < stop)
                ):  # not overlaps(previous, hop)
                    link *= DISJOINT_TIME
                coherence = link if link < weakest else weakest
            sufficiency = (
                relevance
                if expected is None or hop.target_type == expected
                else relevance * TYPE_MISMATCH
            )
            scores = _new(Scores)
            _set(
                scores,
                "__dict__",
                {"relevance": relevance, "coherence": coherence, "sufficiency": sufficiency},
            )
            states.append((self, scores, sums[i] if count > 1 else vectors[i], count, coherence))
        return states

    def score_one(self, path: Path) -> Scores:
        known = self._known(path)
        if known is None:
            known = path.__dict__[STATE] = (self, *self._score(path))
        return known[1]

    def _score(self, path: Path) -> tuple[Scores, np.ndarray | None, int, float]:
        """(scores, vector sum, count, coherence) of `path`: the running state from its
        parent's when that was scored, else from its hops (`centroid_of`'s sum,
        `coherence`)."""
        hops = path.hops
        if not hops:
            return new_scores(0.0, 1.0, 0.0), None, 0, 1.0
        parent = self._known(path.parent) if path.parent is not None else None
        hop = hops[-1]
        if parent is None:
            vectors = [h.vector for h in hops if h.vector is not None]
            mixed = any(v.dtype != vectors[0].dtype for v in vectors)
            total = None if mixed or not vectors else vectors[0]
            for vector in vectors[1:] if total is not None else ():
                total = total + vector
            count, weakest = len(vectors), coherence(hops)
        else:
            _, _, total, count, weakest = parent
            if len(hops) > 1:
                weakest = min(weakest, link_strength(hops[-2], hop))
            vector = hop.vector
            if vector is not None:
                if not count:
                    total, count = vector, 1
                elif total is None or total.dtype != vector.dtype:
                    total, count = None, count + 1
                else:
                    total, count = total + vector, count + 1
        relevance = 0.0
        if count:
            if total is None:
                centroid = centroid_of([h.vector for h in hops if h.vector is not None])
            else:
                centroid = total / count
            norm = float(np.sqrt(centroid.dot(centroid)))
            if norm > 0:
                relevance = max(0.0, min(1.0, float(centroid @ self.query_vector) / norm))
        expected = self.expected_type
        sufficiency = (
            relevance
            if expected is None or hop.target_type == expected
            else relevance * TYPE_MISMATCH
        )
        return new_scores(relevance, weakest, sufficiency), total, count, weakest


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
