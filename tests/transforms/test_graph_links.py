"""What gets embedded for segments and facts, and GRAM's edge linearisation."""

from transforms.graph_links import fact_statement, linearize, segment_search_text


def test_turns_are_indexed_with_their_speaker():
    turn = {"text": "I went to a support group yesterday.", "speaker": "Caroline", "kind": "turn"}
    assert segment_search_text(turn) == "Caroline: I went to a support group yesterday."


def test_chunks_carry_their_document_title_once():
    later = {
        "text": "In 1906 the franchise won 116 games.",
        "kind": "chunk",
        "title": "Chicago Cubs",
    }
    assert segment_search_text(later) == "Chicago Cubs\nIn 1906 the franchise won 116 games."
    first = {
        "text": "Chicago Cubs\nThe Cubs play in Chicago.",
        "kind": "chunk",
        "title": "Chicago Cubs",
    }
    assert segment_search_text(first) == first["text"]
    untitled = {"text": "Acme opened an office.", "speaker": None, "kind": "chunk", "title": ""}
    assert segment_search_text(untitled) == "Acme opened an office."


def test_fact_statement_and_linearisation():
    assert fact_statement("Priya", "work_at", "Harborview") == "Priya work at Harborview"
    assert linearize("Priya", "work_at", "Harborview") == "[Priya] -[work_at]-> [Harborview]"
