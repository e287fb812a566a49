"""Benchmark loaders: MuSiQue's passage corpus as documents, and LoCoMo / MuSiQue questions
resolved to gold segments and documents of a (sliced) collection."""

import json
from pathlib import Path

import pytest

from tests.conftest import SHARED_DATA
from transforms.evaluation.retrieval_questions import locomo_questions, musique_questions
from transforms.loaders import load_file
from transforms.segmenting import segment_document

LOCOMO = SHARED_DATA / "locomo" / "locomo10_dev.json"
MUSIQUE_CORPUS = SHARED_DATA / "musique" / "musique_train_corpus.json"
MUSIQUE_QUESTIONS = SHARED_DATA / "musique" / "musique_train.json"
needs_locomo = pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo not found at {LOCOMO}")
needs_musique = pytest.mark.skipif(
    not MUSIQUE_CORPUS.exists(), reason=f"MuSiQue not found at {MUSIQUE_CORPUS.parent}"
)


def segments_of(path: Path) -> list[dict]:
    """Segment rows of a loaded file, with their document's title (as the snapshot has)."""
    documents = load_file("bench", path).documents
    return [{**s, "title": d["title"]} for d in documents for s in segment_document(d)]


def locomo_slice(tmp_path: Path, sessions: int = 2) -> Path:
    """The first LoCoMo conversation with its first `sessions` sessions (all its QA)."""
    sample = json.loads(LOCOMO.read_text())[0]
    kept = {str(n) for n in range(1, sessions + 1)}
    sample["conversation"] = {
        key: value
        for key, value in sample["conversation"].items()
        if not key.startswith("session_") or key.split("_")[1] in kept
    }
    path = tmp_path / "locomo_slice.json"
    path.write_text(json.dumps([sample]))
    return path


def musique_slice(tmp_path: Path, size: int = 30) -> tuple[Path, Path, int]:
    """`size` corpus passages holding the supporting passages of the first questions, the
    first 10 questions, and how many of them have every supporting passage in the slice."""
    corpus = json.loads(MUSIQUE_CORPUS.read_text())
    questions = json.loads(MUSIQUE_QUESTIONS.read_text())[:10]
    by_key = {(p["title"], p["text"]): p for p in corpus}
    chosen: list[dict] = []
    for question in questions:
        needed = [
            by_key[(p["title"], p["paragraph_text"])]
            for p in question["paragraphs"]
            if p["is_supporting"]
        ]
        if len(chosen) + len([p for p in needed if p not in chosen]) > size // 2:
            break
        chosen.extend(p for p in needed if p not in chosen)
    chosen.extend(p for p in corpus if p not in chosen)
    chosen = chosen[:size]
    keys = {(p["title"], p["text"]) for p in chosen}
    answerable = sum(
        all(
            (p["title"], p["paragraph_text"]) in keys for p in q["paragraphs"] if p["is_supporting"]
        )
        for q in questions
    )
    (tmp_path / "corpus.json").write_text(json.dumps(chosen))
    (tmp_path / "questions.json").write_text(json.dumps(questions))
    return tmp_path / "corpus.json", tmp_path / "questions.json", answerable


def test_passage_corpus_loads_one_document_per_passage(tmp_path: Path):
    passages = [
        {"title": "Rotterdam", "text": "Rotterdam is a port city."},
        {"title": "Leeds", "text": ""},
        {"title": "Lisbon", "text": "Lisbon is the capital of Portugal."},
    ]
    (tmp_path / "corpus.json").write_text(json.dumps(passages))
    result = load_file("c", tmp_path / "corpus.json")
    assert [d["text"] for d in result.documents] == [
        "Rotterdam\nRotterdam is a port city.",
        "Lisbon\nLisbon is the capital of Portugal.",
    ]
    assert [d["title"] for d in result.documents] == ["Rotterdam", "Lisbon"]
    assert [q.record_ref for q in result.quarantined] == ["passage 1"]
    assert result.records_read == 3


def test_musique_gold_maps_by_exact_title_and_text(tmp_path: Path):
    passages = [{"title": "A", "text": "Alpha."}, {"title": "B", "text": "Beta."}]
    (tmp_path / "corpus.json").write_text(json.dumps(passages))

    def question(qid: str, *supporting: tuple[str, str]) -> dict:
        paragraphs = [
            {"title": t, "paragraph_text": x, "is_supporting": True} for t, x in supporting
        ]
        paragraphs.append({"title": "A", "paragraph_text": "Alpha.", "is_supporting": False})
        return {"id": qid, "question": f"q {qid}?", "paragraphs": paragraphs}

    questions = [
        question("2hop__1", ("A", "Alpha."), ("B", "Beta.")),
        question("2hop__2", ("B", "Beta, changed.")),
        question("3hop1__3"),
    ]
    (tmp_path / "q.json").write_text(json.dumps(questions))
    segments = segments_of(tmp_path / "corpus.json")
    loaded = musique_questions(tmp_path / "q.json", segments)
    assert [q.question_id for q in loaded.questions] == ["2hop__1"]
    assert loaded.questions[0].gold == {s["doc_id"] for s in segments}
    assert loaded.questions[0].category == "2hop"
    assert loaded.skipped == {"evidence_not_in_collection": 1, "no_evidence": 1}


def test_locomo_evidence_strings_are_split_and_malformed_ids_counted(tmp_path: Path):
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I moved to Leeds."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice, Leeds is great."},
            ],
        },
        "qa": [
            {"question": "Where?", "evidence": ["D1:1; D1:2"], "category": 4},
            {"question": "Who?", "evidence": ["D:1:2", "D1:2"], "category": 1},
            {"question": "None?", "evidence": [], "category": 5},
            {"question": "Later?", "evidence": ["D2:1"], "category": 2},
        ],
    }
    (tmp_path / "l.json").write_text(json.dumps([sample]))
    segments = segments_of(tmp_path / "l.json")
    loaded = locomo_questions(tmp_path / "l.json", segments)
    turns = {s["turn_id"]: s["segment_id"] for s in segments if s["kind"] == "turn"}
    first, second = loaded.questions
    assert first.gold == {turns["D1:1"], turns["D1:2"]} and first.category == "single-hop"
    assert second.gold == {turns["D1:2"]} and second.category == "multi-hop"
    assert first.gold_sessions == {f"{first.scope_doc_id}/S1"}
    assert loaded.skipped == {
        "malformed_evidence_ids": 1,
        "no_evidence": 1,
        "evidence_not_in_collection": 1,
    }
    assert locomo_questions(tmp_path / "l.json", segments, limit=1).skipped["beyond_limit"] == 1


@needs_locomo
def test_locomo_slice_keeps_questions_with_evidence_in_its_sessions(tmp_path: Path):
    path = locomo_slice(tmp_path)
    segments = segments_of(path)
    loaded = locomo_questions(path, segments)
    qa = json.loads(path.read_text())[0]["qa"]
    assert len(loaded.questions) + sum(
        v for k, v in loaded.skipped.items() if k != "malformed_evidence_ids"
    ) == len(qa)
    assert loaded.questions and loaded.skipped["evidence_not_in_collection"] > 0
    session_ids = {s["session_id"] for s in segments if s["kind"] == "turn"}
    assert session_ids == {"S1", "S2"}
    for question in loaded.questions:
        assert {g.split("/")[1] for g in question.gold_sessions} <= session_ids
        assert len(question.gold_sessions) <= len(question.gold)


@needs_musique
def test_musique_slice_keeps_questions_whose_passages_are_all_in_it(tmp_path: Path):
    corpus, questions, answerable = musique_slice(tmp_path)
    segments = segments_of(corpus)
    loaded = musique_questions(questions, segments)
    assert answerable > 0
    assert len(loaded.questions) == answerable
    assert loaded.skipped == {"evidence_not_in_collection": 10 - answerable}
    documents = {s["doc_id"] for s in segments}
    assert all(question.gold <= documents for question in loaded.questions)
    assert len(documents) == 30
