"""What gets embedded for segments and facts, and GRAM's edge linearisation."""

from transforms.graph_links import fact_statement, linearize, segment_embedding_text


def test_turns_are_embedded_with_their_speaker_and_chunks_as_they_are():
    turn = {"text": "I went to a support group yesterday.", "speaker": "Caroline"}
    assert segment_embedding_text(turn) == "Caroline: I went to a support group yesterday."
    assert segment_embedding_text({"text": "Acme opened an office.", "speaker": None}) == (
        "Acme opened an office."
    )


def test_fact_statement_and_linearisation():
    assert fact_statement("Priya", "work_at", "Harborview") == "Priya work at Harborview"
    assert linearize("Priya", "work_at", "Harborview") == "[Priya] -[work_at]-> [Harborview]"
