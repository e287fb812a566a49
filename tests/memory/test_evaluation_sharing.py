"""An evaluation shares each question's work across its strategies (issue 37, 1): the
question is encoded once per encoder, in batches, and the `hybrid` prior is computed once;
the figures are those of each strategy asked alone, and so are those of `jobs` processes."""

from __future__ import annotations

import os

import numpy as np
import pytest

import memory.snapshot_view as snapshot_view
import memory.strategies.hybrid as hybrid
from memory import Memory
from memory.evaluation import retrieval_scores
from memory.evaluation_jobs import threads_per_job
from transforms.evaluation.retrieval_questions import QuestionSet, RetrievalQuestion
from transforms.progress import read_progress, start_progress

TEXTS = (
    "Who leads the Firmware team?",
    "Where is the Northgate Office?",
    "printer error E-42",
    "When did the Inkwell 3000 launch?",
)
STRATEGIES = ["dense", "bm25", "hybrid", "hipporag_ppr", "memorai_dwpr"]


def _questions(memory: Memory) -> QuestionSet:
    doc = memory._view.segments.column("doc_id")[0].as_py()
    questions = [
        RetrievalQuestion(f"q{i}", text, "sample", frozenset({doc})) for i, text in enumerate(TEXTS)
    ]
    return QuestionSet("musique", questions)


def _rows(run) -> list[dict]:
    return [r for r in run.rows if not str(r["metric"]).startswith("latency")]


def test_questions_are_encoded_once_and_the_prior_computed_once(graph_build, monkeypatch):
    encoded: list[tuple[str, int]] = []
    fused: list[str] = []
    real_encode, real_fused = snapshot_view.encode, hybrid._fused

    def counting_encode(texts, model, *args, **kwargs):
        encoded.append((model, len(texts)))
        return real_encode(texts, model, *args, **kwargs)

    def counting_fused(view, query, pool):
        fused.append(query.text)
        return real_fused(view, query, pool)

    monkeypatch.setattr(snapshot_view, "encode", counting_encode)
    monkeypatch.setattr(hybrid, "_fused", counting_fused)
    with Memory.open(graph_build.root) as memory:
        questions = _questions(memory)
        shared = retrieval_scores(memory, questions, STRATEGIES)
        encoders = {memory.snapshot.embedding_model, memory._view.fusion_encoder}
    assert not shared.errors
    assert sorted(encoded) == sorted((model, len(TEXTS)) for model in encoders)
    assert sorted(fused) == sorted(TEXTS), "one prior per question, for every strategy"
    alone = []
    for strategy in STRATEGIES:  # each strategy on a fresh view: nothing shared
        with Memory.open(graph_build.root) as memory:
            alone.extend(_rows(retrieval_scores(memory, questions, [strategy])))
    assert _rows(shared) == alone


def test_prefilled_vectors_are_those_of_one_query_at_a_time(graph_build) -> None:
    with Memory.open(graph_build.root) as memory:
        view = memory._view
        single = {
            (model, text): view.embed_query(text, model)
            for text in TEXTS
            for model in (view.snapshot.embedding_model, view.fusion_encoder)
        }
    with Memory.open(graph_build.root) as memory:
        memory._view.prefill_queries(TEXTS)
        for (model, text), vector in single.items():
            assert np.array_equal(memory._view.embed_query(text, model), vector)


@pytest.mark.slow
def test_jobs_give_the_same_figures_and_count_progress(graph_build, tmp_path) -> None:
    progress = tmp_path / "progress.log"
    start_progress(progress, len(TEXTS) * len(STRATEGIES), "questions")
    with Memory.open(graph_build.root) as memory:
        questions = _questions(memory)
        one = retrieval_scores(memory, questions, STRATEGIES)
        two = retrieval_scores(memory, questions, STRATEGIES, progress=progress, jobs=2)
    assert _rows(two) == _rows(one) and not two.errors
    assert [t.units for t in two.traces["hybrid"]] == [t.units for t in one.traces["hybrid"]]
    done = read_progress(progress)
    assert done is not None and done.done == done.total == len(TEXTS) * len(STRATEGIES)


@pytest.mark.parametrize("jobs", [1, 2, 3, 64])
def test_each_job_gets_its_share_of_the_cores(jobs: int) -> None:
    """The processes' pools together fit the machine, and each has a thread: pools at
    the machine's width in every process spun on the cores the others needed."""
    cores = os.cpu_count() or 1
    threads = threads_per_job(jobs)
    assert threads >= 1 and (threads * jobs <= cores or threads == 1)
    assert threads * (jobs + 1) > cores or threads == 1  # no core left idle by the split
