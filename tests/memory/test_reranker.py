"""Cross-encoder reranking: the first passages in the model's order, the rest in place."""

from pathlib import Path

import pytest
from transformers import BertForSequenceClassification

from memory.reranker import rerank_scores, reranked_order
from tests.tiny_models import save_tiny_bert

QUERY = "Where is the Harborview Office?"


@pytest.fixture(scope="module")
def tiny_reranker(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A 1-layer BERT with one output: a cross-encoder of random (seeded) judgement."""
    folder = tmp_path_factory.mktemp("tiny_reranker")
    return str(save_tiny_bert(BertForSequenceClassification, ["relevance"], Path(folder)))


def test_reranked_order_is_by_score_with_ties_in_place():
    assert reranked_order([0.1, 0.9, 0.1, 0.5]) == [1, 3, 0, 2]


def test_first_passages_follow_the_model_and_the_rest_keep_their_places(
    graph_memory, tiny_reranker
):
    plain = graph_memory.query(QUERY, strategy="hybrid", k=8)
    result = graph_memory.query(
        QUERY, strategy="hybrid", k=8, reranker=tiny_reranker, rerank_depth=5
    )
    head = [h.segment_id for h in plain.hits[:5]]
    texts = [graph_memory._view.segment(s)["search_text"] for s in head]
    scores = rerank_scores(tiny_reranker, QUERY, texts)
    expected = [head[i] for i in reranked_order(scores)]
    assert [h.segment_id for h in result.hits[:5]] == expected
    assert [h.segment_id for h in result.hits[5:]] == [h.segment_id for h in plain.hits[5:]]
    assert [h.score for h in result.hits[:5]] == sorted((round(s, 6) for s in scores), reverse=True)
    explanation = result.explanation
    assert explanation["reranker"] == tiny_reranker and explanation["rerank_depth"] == 5
    assert [s for s, _ in explanation["rank_before_reranking"]] == expected


def test_a_model_that_is_not_there_is_named_in_the_error(tmp_path):
    with pytest.raises(ValueError, match="not-a-model"):
        rerank_scores(str(tmp_path / "not-a-model"), QUERY, ["text"])


def test_cli_names_a_missing_reranker_in_one_line(graph_build, tmp_path, capsys):
    from kgmem.cli.app import main

    argv = ["query", QUERY, "--home", str(graph_build.root), "--reranker", str(tmp_path / "nope")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "Traceback" not in err
