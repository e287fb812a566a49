"""Questions of the retrieval benchmarks (LoCoMo, MuSiQue) with their gold units resolved
against the segments of a built collection.

- LoCoMo (a list of samples with `qa[]`: `question`, `category`, `evidence` turn ids like
  `D1:3`): a question's gold units are the `turn` segments of its conversation (the document
  titled by the sample's id, as `transforms.loaders` builds it) whose `turn_id` is an
  evidence id; its gold sessions are those turns' `session_id`s. Evidence strings are split
  on `;`, `,` and spaces; tokens that are not `D<session>:<turn>` (the data has a few, e.g.
  `D:11:26`) are dropped and counted.
- MuSiQue (a list of questions with `paragraphs[]`: `title`, `paragraph_text`,
  `is_supporting`): the gold units are the documents of the supporting paragraphs. Rule: a
  paragraph maps to the document whose title and text are exactly the paragraph's (the
  loader's passage rendering of title and text), i.e. the same content id.

A question is evaluated only when it has evidence and every gold unit maps to the
collection; the others are skipped and counted by reason, so a slice of a benchmark is
scored on the questions it can answer, and the denominators of recall stay honest.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transforms.ids import content_id
from transforms.loaders import locomo_conversation_id, passage_document

LOCOMO_CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
_TURN_ID = re.compile(r"D\d+:\d+")
_SPLIT = re.compile(r"[;,\s]+")


@dataclass(frozen=True)
class RetrievalQuestion:
    """One benchmark question with the unit ids a retriever should find."""

    question_id: str
    text: str
    category: str
    gold: frozenset[str]
    """Turn segment ids (LoCoMo) or document ids of passages (MuSiQue)."""
    gold_sessions: frozenset[str] = frozenset()
    """LoCoMo: `doc_id/session_id` of the gold turns' sessions."""
    scope_doc_id: str | None = None
    """LoCoMo: the conversation (document) the question is asked about."""


@dataclass
class QuestionSet:
    """The evaluable questions of a benchmark file and how many were skipped, by reason."""

    benchmark: str
    questions: list[RetrievalQuestion]
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def fingerprint(self) -> str:
        """Content id of the questions and their gold units (equal sets compare equal)."""
        return content_id(
            self.benchmark,
            [
                (q.question_id, q.text, sorted(q.gold), sorted(q.gold_sessions))
                for q in self.questions
            ],
        )


def load_questions(
    benchmark: str,
    path: str | Path,
    segments: Iterable[Mapping[str, Any]],
    limit: int | None = None,
) -> QuestionSet:
    """The questions of `benchmark` ("locomo" or "musique") in `path`, resolved against
    `segments` (rows with segment_id, doc_id, kind, title, turn_id, session_id); at most
    the first `limit` evaluable ones."""
    loaders = {"locomo": locomo_questions, "musique": musique_questions}
    if benchmark not in loaders:
        raise ValueError(
            f"unknown retrieval benchmark {benchmark!r}; choose one of {list(loaders)}"
        )
    return loaders[benchmark](path, segments, limit)


def locomo_questions(
    path: str | Path, segments: Iterable[Mapping[str, Any]], limit: int | None = None
) -> QuestionSet:
    """LoCoMo QA of every sample in `path` (see the module docstring for the mapping)."""
    turns: dict[tuple[str, str], Mapping[str, Any]] = {}
    conversations: set[str] = set()
    for row in segments:
        if row["kind"] == "turn":
            turns[(row["title"], row["turn_id"])] = row
            conversations.add(row["title"])
    skipped: Counter[str] = Counter()
    questions: list[RetrievalQuestion] = []
    for index, sample in enumerate(_read_list(path, "LoCoMo samples")):
        conversation = locomo_conversation_id(sample, index)
        for number, qa in enumerate(sample.get("qa") or []):
            tokens = [t for e in qa.get("evidence") or [] for t in _SPLIT.split(str(e)) if t]
            evidence = [t for t in tokens if _TURN_ID.fullmatch(t)]
            skipped["malformed_evidence_ids"] += len(tokens) - len(evidence)
            if not evidence:
                skipped["no_evidence"] += 1
            elif conversation not in conversations:
                skipped["conversation_not_in_collection"] += 1
            elif any((conversation, t) not in turns for t in evidence):
                skipped["evidence_not_in_collection"] += 1
            else:
                rows = [turns[(conversation, t)] for t in evidence]
                category = qa.get("category")
                questions.append(
                    RetrievalQuestion(
                        question_id=f"{conversation}#{number}",
                        text=str(qa["question"]),
                        category=LOCOMO_CATEGORIES.get(category, str(category)),
                        gold=frozenset(r["segment_id"] for r in rows),
                        gold_sessions=frozenset(f"{r['doc_id']}/{r['session_id']}" for r in rows),
                        scope_doc_id=rows[0]["doc_id"],
                    )
                )
    return _limited("locomo", questions, skipped, limit)


def musique_questions(
    path: str | Path, segments: Iterable[Mapping[str, Any]], limit: int | None = None
) -> QuestionSet:
    """MuSiQue questions in `path`, gold = documents of their supporting paragraphs."""
    documents = {row["doc_id"] for row in segments}
    skipped: Counter[str] = Counter()
    questions: list[RetrievalQuestion] = []
    for index, record in enumerate(_read_list(path, "MuSiQue questions")):
        supporting = [p for p in record.get("paragraphs") or [] if p.get("is_supporting")]
        gold = {_passage_id(p["title"], p["paragraph_text"]) for p in supporting}
        if not gold:
            skipped["no_evidence"] += 1
        elif not gold <= documents:
            skipped["evidence_not_in_collection"] += 1
        else:
            question_id = str(record.get("id") or f"question {index}")
            hops = question_id.split("__", 1)[0] if "__" in question_id else "all"
            questions.append(
                RetrievalQuestion(question_id, str(record["question"]), hops, frozenset(gold))
            )
    return _limited("musique", questions, skipped, limit)


def _passage_id(title: str, text: str) -> str:
    return passage_document("", Path(""), 0, title, text)["doc_id"]


def _read_list(path: str | Path, what: str) -> list[dict[str, Any]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise ValueError(f"{path}: expected a JSON list of {what}")
    return data


def _limited(
    benchmark: str, questions: list[RetrievalQuestion], skipped: Counter[str], limit: int | None
) -> QuestionSet:
    if limit is not None:
        skipped["beyond_limit"] += max(0, len(questions) - limit)
        questions = questions[:limit]
    return QuestionSet(benchmark, questions, {k: v for k, v in skipped.items() if v})
