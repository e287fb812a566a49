"""Years mentioned in text, reference times of questions, and the TimeQA loader and metric."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from transforms.evaluation.timeqa import hit_at_k, load_timeqa
from transforms.temporal_mentions import mentioned_span, mentioned_years, reference_time


@pytest.mark.parametrize(
    ("text", "years"),
    [
        ("He was Secretary of War during 1916-1920 .", [1916, 1920]),
        ("from 1811 to 1827?", [1811, 1827]),
        ("in the 1990s", [1990, 1999]),
        ("In 1995, and 2003.", [1995, 2003]),
        ("error E-1990, 1,500 pages, serial 12345, 3.1999", []),
    ],
)
def test_mentioned_years(text: str, years: list[int]):
    assert mentioned_years(text) == years


def test_spans_and_reference_times():
    assert mentioned_span("no year here") == (None, None)
    start, end = mentioned_span("between 1901 and 1905")
    assert (start.year, end.year, end.month) == (1901, 1905, 12)
    assert reference_time("Who owned it from 1811 to 1827?") == datetime(1819, 7, 1, tzinfo=UTC)
    assert reference_time("Who owns it?") is None


def test_timeqa_loader_and_hit_at_k(tmp_path: Path):
    article = {
        "link": "/wiki/Some_House",
        "paras": repr(
            ["Some House", "Peter owned it from 1811 to 1827 .", "Baker had it in 1916 ."]
        ),
        "questions": [
            ["Who owned Some House from 1811 to 1827?", [{"para": 1, "answer": "George Peter"}]],
            ["Who owned Some House?", [{"para": 2, "answer": "Baker"}]],
        ],
    }
    path = tmp_path / "timeqa.json"
    path.write_text(json.dumps([article]))
    dataset = load_timeqa(path)
    assert [d["title"] for d in dataset.documents] == [
        "Some House ¶0",
        "Some House ¶1",
        "Some House ¶2",
    ]
    assert dataset.skipped == {"no year in question": 1}
    question = dataset.questions[0]
    assert question.gold_titles == {"Some House ¶1"} and question.answers == ("George Peter",)

    def retrieve(text, k, valid_at):
        return (
            ["Some House ¶1", "Some House ¶2"] if valid_at else ["Some House ¶2", "Some House ¶1"]
        )

    scores = hit_at_k(dataset.questions, retrieve, ks=(1, 2))
    assert scores == {"with_time": {1: 1.0, 2: 1.0}, "ignoring_time": {1: 0.0, 2: 1.0}}
