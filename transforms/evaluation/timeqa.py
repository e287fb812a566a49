"""TimeQA as a temporal retrieval benchmark: paragraphs as documents, questions with times.

Layout (`human_annotated_train.json` and any file like it): a list of Wikipedia articles,
each with `paras` (paragraph texts) and `questions` ([question, [{para, answer, ...}]]);
both fields may be JSON or a Python-literal string. Every paragraph becomes one document
titled "<article> ¶<n>", so a retrieved segment's title names its paragraph. A question
is time-constrained when it names a year; its reference time is the middle of the years
it names (`transforms.temporal_mentions.reference_time`). A hit at k: one of the top k
segments comes from a paragraph that holds an answer.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from transforms.temporal_mentions import reference_time


@dataclass(frozen=True)
class TimeQuestion:
    """One time-constrained question, its reference time and the titles of its gold paragraphs."""

    text: str
    valid_at: datetime
    gold_titles: frozenset[str]
    answers: tuple[str, ...]


@dataclass
class TimeQaSet:
    """Documents to build and the questions to ask, plus what was left out and why."""

    documents: list[dict[str, str]] = field(default_factory=list)
    questions: list[TimeQuestion] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)


def _field(value: Any) -> Any:
    return ast.literal_eval(value) if isinstance(value, str) else value


def paragraph_title(article: str, index: int) -> str:
    return f"{article} ¶{index}"


def load_timeqa(path: str | Path, max_articles: int | None = None) -> TimeQaSet:
    """Read a TimeQA-layout file (the first `max_articles` articles)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of TimeQA articles")
    result = TimeQaSet()
    for number, article in enumerate(data[:max_articles]):
        name = str(article.get("link") or article.get("index") or number).rsplit("/", 1)[-1]
        name = name.split("#")[0].replace("_", " ")
        for index, text in enumerate(_field(article["paras"])):
            if text.strip():
                title = paragraph_title(name, index)
                result.documents.append({"id": f"{number}:{index}", "title": title, "text": text})
        for question, answers in _field(article["questions"]):
            valid_at = reference_time(question)
            if valid_at is None:
                result.skipped["no year in question"] = (
                    result.skipped.get("no year in question", 0) + 1
                )
                continue
            gold = frozenset(paragraph_title(name, a["para"]) for a in answers)
            result.questions.append(
                TimeQuestion(question, valid_at, gold, tuple(a["answer"] for a in answers))
            )
    return result


Retrieve = Callable[[str, int, datetime | None], Sequence[str]]
"""(question, k, valid_at) -> titles of the retrieved segments, best first."""


def hit_at_k(
    questions: Iterable[TimeQuestion], retrieve: Retrieve, ks: Sequence[int] = (1, 3, 5)
) -> dict[str, dict[int, float]]:
    """hit@k with the question's reference time and ignoring it."""
    questions = list(questions)
    largest = max(ks)
    hits = {"with_time": dict.fromkeys(ks, 0), "ignoring_time": dict.fromkeys(ks, 0)}
    for q in questions:
        for mode, valid_at in (("with_time", q.valid_at), ("ignoring_time", None)):
            titles = list(retrieve(q.text, largest, valid_at))
            for k in ks:
                hits[mode][k] += any(t in q.gold_titles for t in titles[:k])
    n = max(len(questions), 1)
    return {mode: {k: round(v / n, 4) for k, v in by_k.items()} for mode, by_k in hits.items()}
