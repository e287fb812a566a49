"""Queries against the sample snapshot: specific facts, two-hop retrieval, provenance, CLI."""

import json

import pytest

from kgmem.cli import main
from memory import Memory


@pytest.fixture(scope="module")
def memory(sample_build) -> Memory:
    workspace, _ = sample_build
    return Memory.open(workspace.root)


def _facts(result) -> set[tuple[str, str, str]]:
    return {(f["head"], f["relation"], f["tail"]) for hit in result for f in hit.facts}


def test_dense_finds_the_ceo_facts(memory: Memory):
    result = memory.query("Who is the CEO of Acme Corporation?", strategy="dense", k=5)
    ceo = {f for f in _facts(result) if f[1] == "ceo_of"}
    assert ("Marcus Bennett", "ceo_of", "Acme Corporation") in ceo


def test_bm25_finds_the_recurring_printer_error_with_turn_provenance(memory: Memory):
    result = memory.query("error E-42 again after firmware 2.4.1", strategy="bm25", k=5)
    turns = [h for h in result if h.provenance["kind"] == "turn"]
    assert turns, "support-thread turns are retrieved"
    assert all(h.provenance["speaker"] and h.provenance["turn_id"] for h in turns)
    assert any("E-42" in h.text for h in result)


def test_ppr_two_hops_from_person_to_office_city(memory: Memory):
    result = memory.query(
        "Which city is Priya Natarajan's office in?", strategy="hipporag_ppr", k=8
    )
    assert "Priya Natarajan" in result.explanation["named_in_query"]
    texts = [h.text for h in result]
    assert any("Priya Natarajan works at the Harborview Office" in t for t in texts)
    assert any("Harborview Office is located in Rotterdam" in t for t in texts)
    facts = _facts(result)
    assert ("Priya Natarajan", "work_at", "Harborview Office") in facts
    assert ("Harborview Office", "locate_in", "Rotterdam") in facts


def test_provenance_points_into_the_document(memory: Memory, sample_build):
    workspace, _ = sample_build
    hit = memory.query("Sam moved to Lisbon", strategy="dense", k=1).hits[0]
    con = workspace.connect(read_only=True)
    text = con.execute(
        "SELECT text FROM documents WHERE doc_id = ?", [hit.provenance["doc_id"]]
    ).fetchall()[0][0]
    assert text[hit.provenance["char_start"] : hit.provenance["char_end"]] == hit.text
    assert hit.provenance["observed_at"]


def test_snapshot_selection_and_errors(memory: Memory, sample_build):
    workspace, _ = sample_build
    same = Memory.open(workspace.root, snapshot=memory.snapshot.snapshot_id)
    query = "Where is the Northgate Office?"
    assert [h.segment_id for h in same.query(query)] == [h.segment_id for h in memory.query(query)]
    with pytest.raises(LookupError, match="no snapshot 'snap-nope'"):
        Memory.open(workspace.root, snapshot="snap-nope")
    with pytest.raises(ValueError, match="unknown strategy"):
        memory.query("x", strategy="nope")
    with pytest.raises(ValueError, match="query text is empty"):
        memory.query("  ")


def test_cli_errors_are_one_line_and_debug_shows_the_traceback(sample_build, tmp_path, capsys):
    workspace, _ = sample_build
    assert main(["query", "", "--home", str(workspace.root)]) == 2
    assert "query text is empty" in capsys.readouterr().err
    a_file = tmp_path / "home.txt"
    a_file.write_text("not a folder")
    assert main(["snapshots", "--home", str(a_file)]) == 2
    error = capsys.readouterr().err
    assert "is a file, not a folder" in error and error.count("\n") == 1, "one line, unwrapped"
    assert main(["--debug", "query", "", "--home", str(workspace.root)]) == 2  # not 1
    debug = capsys.readouterr().err
    assert "Traceback" in debug and "query text is empty" in debug


def test_cli_query_json(sample_build, capsys):
    workspace, _ = sample_build
    code = main(
        [
            "query",
            "Who leads the Firmware team?",
            "--json",
            "-k",
            "2",
            "--home",
            str(workspace.root),
        ]
    )
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["strategy"] == "dense" and len(payload["hits"]) == 2
    assert {"doc_id", "char_start", "char_end", "observed_at"} <= set(
        payload["hits"][0]["provenance"]
    )


def test_the_snapshot_pins_entity_links_and_the_walk_can_use_them(memory: Memory):
    links = memory._view.table("links").to_arrow().to_pylist()
    assert links and {r["kind"] for r in links} <= {"co_occurs", "synonym"}
    assert all(r["head_id"] < r["tail_id"] for r in links)
    query = "Which city is Priya Natarajan's office in?"
    without = memory.query(query, strategy="hipporag_ppr", k=20)  # off by default
    with_links = memory.query(
        query,
        strategy="hipporag_ppr",
        k=20,
        options={"co_occurs_weight": 1.0, "synonym_weight": 1.0},
    )
    assert [h.score for h in with_links] != [h.score for h in without]
