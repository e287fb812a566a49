"""Hits of long documents (many chunks each): the shown chunk is the document's best for
the query, and the top hits do not depend on k (issue 37, 3.3).

Two long documents and nothing else, so that k=5 passages can never be filled: before the
fix, `Memory.query` widened its fetch to fill them, the flat candidate pool grew with it,
and the fused scores (and the best chunk of a document) changed with k."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import Memory

TOPICS = [
    ("backup", "Nightly backups are copied to the Oslo vault at 02:00 by the cronjob"),
    ("badge", "Visitor badges are printed at the reception desk in building C"),
    ("coffee", "The espresso machine on floor four is descaled every Friday"),
    ("parking", "Parking permits are renewed in March through the facilities portal"),
    ("vpn", "The VPN certificate expires after ninety days and is renewed by IT"),
    ("printer", "Printer toner is ordered from Tonerline when the gauge shows ten percent"),
    ("fire", "Fire drills take place on the first Monday of every quarter"),
    ("laptop", "Laptops are encrypted with a recovery key held by the service desk"),
]
QUESTIONS = [
    "Where are the nightly backups copied?",
    "Who renews the VPN certificate?",
    "When are the fire drills?",
]


def _handbook(title: str, rounds: int) -> str:
    paragraphs = [f"# {title}", ""]
    for round_ in range(rounds):
        for topic, sentence in TOPICS:
            paragraphs.append(
                f"Note {round_ + 1} on {topic}. {sentence}. This paragraph repeats the "
                f"general office guidance for staff and visitors, revision {round_ + 1}."
            )
            paragraphs.append("")
    return "\n".join(paragraphs)


@pytest.fixture(scope="module")
def long_memory(tmp_path_factory: pytest.TempPathFactory, dagster_home: Path):
    from dagster_project.build import build_collection
    from dagster_project.definitions import kgmem_definitions
    from dagster_project.resources import PipelineSettings
    from stores.workspace import Workspace

    folder = tmp_path_factory.mktemp("long_docs")
    inputs = folder / "docs"
    inputs.mkdir()
    (inputs / "2024-01-01-office-handbook.md").write_text(_handbook("Office handbook", 8))
    (inputs / "2024-02-01-it-handbook.md").write_text(_handbook("IT handbook", 8))
    workspace = Workspace.at(folder / "home")
    settings = PipelineSettings(llm_backend="none", chunk_tokens=40)
    build_collection("handbooks", [str(inputs)], workspace, kgmem_definitions(), settings)
    with Memory.open(workspace.root, collection="handbooks") as memory:
        yield memory


@pytest.mark.slow
@pytest.mark.parametrize("question", QUESTIONS)
def test_the_top_hit_does_not_depend_on_k(long_memory: Memory, question: str) -> None:
    one = long_memory.query(question, strategy="hybrid", k=1).hits
    five = long_memory.query(question, strategy="hybrid", k=5).hits
    assert len(five) == 2, "two documents: k=5 is never filled, the fetch widens"
    assert (one[0].segment_id, one[0].score) == (five[0].segment_id, five[0].score)


@pytest.mark.slow
def test_the_shown_chunk_is_the_documents_best_for_the_query(long_memory: Memory) -> None:
    hit = long_memory.query("Where are the nightly backups copied?", strategy="hybrid", k=5).hits[0]
    assert "Oslo vault" in hit.text
    assert all(other["score"] <= hit.score for other in hit.evidence)
