"""KGERMAR three-bank fusion end to end on the sample corpus: the structure table built by
the graph_embeddings asset and pinned by the snapshot, the strategy, λ fitting and
`kgmem train fusion-weights`; plus the structure table's keep-when-unchanged sync."""

from __future__ import annotations

import dataclasses
import json
import shutil
import types
from pathlib import Path

import lancedb
import numpy as np
import pytest

from memory import fusion_weights
from memory.fusion_fit import fit_fusion_weights, read_questions, simplex_grid
from memory.fusion_weights import BANKS, parse_weights, resolve_weights, weights_path, write_fitted
from memory.snapshot_view import SnapshotView
from stores.structure_table import sync_structure
from stores.workspace import HOME_ENV
from transforms.rgcn import RGCNConfig

PRIYA = "Priya Natarajan works at the Harborview Office"
QUESTIONS = [
    {"question": "Where does Priya Natarajan work?", "gold_contains": PRIYA},
    {
        "question": "In which city is the Harborview Office?",
        "gold_contains": "The Harborview Office is located in Rotterdam",
    },
    {"question": "Who is the CEO of Acme?", "gold_contains": "Marcus Bennett is the CEO"},
    {
        "question": "Who succeeded Eleanor Whitfield?",
        "gold_contains": "succeeded Eleanor Whitfield",
    },
]


def _gold(view: SnapshotView, needle: str) -> set[str]:
    rows = view.segments.select(["segment_id", "text"]).to_pylist()
    return {r["segment_id"] for r in rows if needle in r["text"]}


def test_snapshot_pins_the_structure_table(graph_memory) -> None:
    view = graph_memory._view
    assert "structure" in graph_memory.snapshot.lance_versions
    structure = view.table("structure").to_arrow()
    assert sorted(structure.column("entity_id").to_pylist()) == sorted(
        view.entities.column("entity_id").to_pylist()
    )
    assert len(set(structure.column("graph_hash").to_pylist())) == 1
    vectors = np.asarray(structure.column("vector").to_pylist())
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert structure.schema.field("structural").type.list_size == vectors.shape[1]


def test_strategy_fuses_three_banks(graph_memory) -> None:
    result = graph_memory.query(
        "Where does Priya Natarajan work?", strategy="kgermar_fusion", k=5, unit="segment"
    )
    explanation = result.explanation
    assert 0 < len(result.hits) <= 5
    assert set(explanation["banks"]) == set(BANKS)
    assert sum(explanation["weights"].values()) == pytest.approx(1.0, abs=1e-5)
    assert explanation["weights_source"].startswith("default")
    assert explanation["structural_entities"], "the structural bank found entities"
    assert _gold(graph_memory._view, PRIYA) & {h.segment_id for h in result.hits}
    json.dumps(explanation)


def test_weights_option_selects_a_bank(graph_memory) -> None:
    text = "Harborview Office Rotterdam"
    lexical = graph_memory.query(text, strategy="bm25", k=4)
    only = graph_memory.query(
        text, strategy="kgermar_fusion", k=4, options={"fusion_weights": [2, 0, 0]}
    )
    assert only.explanation["weights"] == {"contextual": 1.0, "semantic": 0.0, "structural": 0.0}
    assert only.explanation["weights_source"] == "options"
    banks_only = [segment for segment, _ in only.explanation["fused_banks"]]
    assert banks_only[:4] == [h.segment_id for h in lexical.hits]
    split = graph_memory.query(
        text, strategy="kgermar_fusion", k=6, options={"bank_budget": "split"}
    )
    assert split.explanation["bank_budget"] == 2 and len(split.hits) <= 6


def test_snapshot_without_structure_seeds_the_structural_bank_with_segments(
    graph_memory,
) -> None:
    view = graph_memory._view
    versions = {k: v for k, v in view.snapshot.lance_versions.items() if k != "structure"}
    older = SnapshotView(
        dataclasses.replace(view.snapshot, lance_versions=versions), view.connect, view.db
    )
    from memory.snapshot_view import QueryContext
    from memory.strategies.kgermar_fusion import kgermar_fusion

    ranking = kgermar_fusion(older, QueryContext("Where does Priya Natarajan work?", 5))
    assert 0 < len(ranking.scored) <= 5
    assert set(ranking.explanation["banks"]) == set(BANKS)
    assert ranking.explanation["banks"]["structural"]["top"], "the passage graph still serves"
    assert ranking.explanation["structural_entities"] == []
    assert "structural" in ranking.explanation["missing_tables"][0]
    assert "seeded by the flat prior's segments alone" in ranking.explanation["note"]


def test_fit_fusion_weights_on_sample_questions(graph_memory, tmp_path: Path) -> None:
    path = tmp_path / "dev.jsonl"
    path.write_text("\n".join(json.dumps(q) for q in QUESTIONS))
    questions = read_questions(path, graph_memory._view)
    assert all(gold for _, gold in questions)
    fit = fit_fusion_weights(graph_memory, questions, k=3)
    assert sum(fit.weights.values()) == pytest.approx(1.0)
    assert all(round(w * 10, 6) == round(w * 10) for w in fit.weights.values())  # on the grid
    assert fit.grid_points == 66 and fit.questions == len(QUESTIONS)
    assert fit.recall_at_k >= fit.default_recall_at_k and fit.structural_available


def test_simplex_grid_and_weight_parsing() -> None:
    grid = simplex_grid(0.1)
    assert len(grid) == 66 and all(sum(g.values()) == pytest.approx(1.0) for g in grid)
    assert len(simplex_grid(0.5)) == 6
    assert parse_weights({"semantic": 3, "structural": 1}) == {
        "contextual": 0.0,
        "semantic": 0.75,
        "structural": 0.25,
    }
    for bad in ([1, 2], [-1, 1, 1], {"lexical": 1}):
        with pytest.raises(ValueError):
            parse_weights(bad)
    with pytest.raises(ValueError):
        simplex_grid(0.3)


def test_cli_fits_and_the_strategy_reads_the_weights(
    graph_build, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a copy of the sample workspace: the fitted weights file is workspace state that
    every kgermar_fusion query of that home reads, and the sample build is shared by the
    run's xdist workers, whose kgermar tests (the mapped-vs-computed index comparison
    among them) would otherwise rank by whichever weights the file held that moment."""
    from kgmem.cli.app import main
    from memory import Memory

    home = tmp_path / "home"
    shutil.copytree(graph_build.root, home, ignore=shutil.ignore_patterns("dagster"))
    monkeypatch.setenv(HOME_ENV, str(home))  # main() sets it; restored after
    path = tmp_path / "dev.jsonl"
    path.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    argv = ["train", "fusion-weights", "--questions", str(path), "--k", "3"]
    assert main([*argv, "--home", str(home), "--collection", "sample"]) == 0
    record = json.loads(weights_path(home).read_text())["sample"]
    assert sum(record["weights"].values()) == pytest.approx(1.0)
    with Memory.open(home) as memory:
        result = memory.query("Who is the CEO of Acme?", strategy="kgermar_fusion", k=3)
    assert result.explanation["weights_source"].startswith("fitted")
    assert result.explanation["weights"] == pytest.approx(record["weights"])
    assert not weights_path(graph_build.root).exists(), "the shared workspace is untouched"
    assert main(["train", "fusion-weights", "--home", str(home)]) == 2


def test_structure_sync_keeps_the_table_when_nothing_changed(tmp_path: Path) -> None:
    db = lancedb.connect(str(tmp_path))
    ids = ["0a", "0b", "0c"]
    vectors = np.eye(3, 8, dtype=np.float32)
    facts = [{"head_entity_id": "0a", "relation": "works_at", "tail_entity_id": "0b"}]
    config = RGCNConfig(epochs=3)
    first = sync_structure(db, "c__structure", ids, vectors, facts, config)
    again = sync_structure(db, "c__structure", ids, vectors, facts, config)
    assert first.bank is not None and again.bank is None
    assert again.version == first.version
    moved = [{**facts[0], "tail_entity_id": "0c"}]
    changed = sync_structure(db, "c__structure", ids, vectors, moved, config)
    assert changed.bank is not None and changed.version > first.version
    assert changed.graph_hash != first.graph_hash


def _operator_by_loops(view, query) -> np.ndarray:
    """The R-GCN aggregation over [segments | nodes] written out edge by edge (the oracle
    of `memory.passage_rgcn`'s vectorised one): per target node, per relation, the mean
    over that relation's neighbours."""
    from memory.graph import graph_of

    index = view.graph_index
    n_segments, n_nodes = index.segment_nodes.shape
    ids = view.node_names.passage_nodes
    edges: dict[tuple[int, str], list[int]] = {}

    def add(target: int, relation: str, source: int) -> None:
        edges.setdefault((target, relation), []).append(source)

    links = index.segment_nodes.tocoo()
    for segment, node in zip(links.row.tolist(), links.col.tolist(), strict=True):
        name = ids[node]
        kind = name.split(":")[0] if ":" in name else "entity"
        add(segment, f"kind {kind}", n_segments + node)
        add(n_segments + node, "mentioned in", segment)
    for turn, following in enumerate(index.next_segment.tolist()):
        if following >= 0:
            add(turn, "next", following)
            add(following, "next", turn)
    graph = graph_of(view, query)
    for fact, (head, tail) in enumerate(zip(graph.fact_head, graph.fact_tail, strict=True)):
        a, b = index.entity_node[head], index.entity_node[tail]
        if a >= 0 and b >= 0 and a != b:
            relation = f"fact {graph.facts[fact]['relation']}"
            add(n_segments + a, relation, n_segments + b)
            add(n_segments + b, relation, n_segments + a)
    mean = np.zeros((n_segments + n_nodes, n_segments + n_nodes))
    for (target, _), sources in edges.items():
        for source in sources:
            mean[target, source] += 1.0 / len(sources)
    return mean


def test_structural_propagation_is_the_rgcn_over_the_passage_graph(graph_memory) -> None:
    """Two layers h <- h + M h of the sparse spread equal the dense operator built edge by
    edge, from random sparse seeds; a segment two hops from a seed (through a node they
    share) scores, and so does every segment of the seed's own nodes."""
    from memory.passage_rgcn import passage_rgcn
    from memory.snapshot_view import QueryContext

    view = graph_memory._view
    query = QueryContext("Where does Priya Natarajan work?", 5)
    rgcn = passage_rgcn(view, query)
    mean = _operator_by_loops(view, query)
    assert rgcn.spread.shape == mean.shape
    step = np.eye(len(mean)) + mean
    rng = np.random.default_rng(7)
    for _ in range(10):
        seeds = np.sort(rng.choice(len(mean), 4, replace=False))
        values = rng.uniform(0.1, 1.0, 4)
        reset = np.zeros(len(mean))
        reset[seeds] = values
        want = (step @ step @ reset)[: rgcn.n_segments]
        reached, scores = rgcn.propagate(seeds, values, threshold=0)
        assert (np.diff(reached) > 0).all() and set(np.flatnonzero(want)) <= set(reached)
        full = np.zeros(rgcn.n_segments)
        full[reached] = scores
        np.testing.assert_allclose(full, want, rtol=1e-9, atol=1e-12)
        bounded, bounded_scores = rgcn.propagate(seeds, values, threshold=0.3)
        assert set(bounded) <= set(reached)  # entries below 0.3 were not spread
        assert (bounded_scores <= full[bounded] + 1e-12).all()
        assert rgcn.propagate(seeds, values, threshold=2.0)[0].tolist() == sorted(
            int(p) for p in seeds if p < rgcn.n_segments
        )
    links = view.graph_index.segment_nodes
    seed = int(np.argmax(np.diff(links.indptr)))  # the segment with the most nodes
    reached, scores = rgcn.propagate(np.array([seed]), np.array([1.0]), threshold=0)
    neighbours = np.unique(links[:, links[seed].indices].tocsc().indices)
    assert len(neighbours) > 1 and set(neighbours) <= set(reached)
    assert (scores[np.searchsorted(reached, neighbours)] > 0).all()
    alone = rgcn.propagate(np.array([seed]), np.array([1.0]), layers=0)
    assert alone[0].tolist() == [seed] and alone[1].tolist() == [1.0]


def test_a_small_structure_table_is_searched_in_memory_as_lancedb_searches_it(
    graph_memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The structure rows held in memory rank the entities as LanceDB's exact scan of the
    table does, with its cosines up to float32 rounding; the strategy reads them instead
    of the table, and answers as with the table where the rows are not held."""
    from memory.strategies import kgermar_fusion as kgermar

    view = graph_memory._view
    table = view.table("structure")
    rows = kgermar._structure_rows(view, table)
    assert rows is not None and len(rows.ids) == table.count_rows()
    texts = [q["question"] for q in QUESTIONS] + ["Rotterdam", "printer error", "CEO"]
    for text in texts:
        vector = view.embed_query(text)
        for k in (1, 5, 40):
            got = rows.nearest(vector, k)
            want = kgermar._structural_entities(table, vector, k)
            assert [e for e, _ in got] == [e for e, _ in want]
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=2e-6)
    held = [graph_memory.query(t, strategy="kgermar_fusion", k=5) for t in texts]
    graph_memory.close()
    monkeypatch.setattr(kgermar, "IN_MEMORY_ROWS", 0)
    for text, answer in zip(texts, held, strict=True):
        again = graph_memory.query(text, strategy="kgermar_fusion", k=5)
        assert graph_memory._view.cache["kgermar_structure_rows"] is None
        assert [h.segment_id for h in again.hits] == [h.segment_id for h in answer.hits]
    graph_memory.close()


def test_a_widened_ask_reads_the_ranking_kept_for_its_question(
    graph_memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The structure rows are multiplied with a question once: the second ask of the same
    question at 2k (as `Memory.query` widens, the k first asked kept as its depth) reads
    the kept ranking, whose banks searched the entities of the k first asked."""
    from memory.graph import graph_of
    from memory.snapshot_view import QueryContext
    from memory.strategies import kgermar_fusion as kgermar

    view = graph_memory._view
    rows = kgermar._structure_rows(view, view.table("structure"))
    searches: list[int] = []
    original = kgermar.ExactSegments.nearest  # the segment search shares it: rows' counted
    monkeypatch.setattr(
        kgermar.ExactSegments,
        "nearest",
        lambda self, vector, k: (self is rows and searches.append(k)) or original(self, vector, k),
    )
    text = QUESTIONS[0]["question"]
    first = kgermar.kgermar_fusion(view, QueryContext(text, 5, depth=5))
    widened = kgermar.kgermar_fusion(view, QueryContext(text, 10, depth=5))
    assert searches == [5] and widened.scored[:5] == first.scored
    want = rows.nearest(view.embed_query(text), 5)
    assert first.explanation["structural_entities"] == [
        [kgermar._name(graph_of(view, QueryContext(text, 5)), e), round(s, 4)] for e, s in want
    ]
    graph_memory.close()


def test_an_emptied_structure_table_gives_no_structural_entities(tmp_path: Path) -> None:
    """A collection left without entities keeps an empty structure table (never dropped,
    so older snapshots' versions survive); held in memory it finds no entity."""
    from types import SimpleNamespace

    from memory.strategies import kgermar_fusion as kgermar

    db = lancedb.connect(str(tmp_path))
    ids, vectors = ["0a", "0b"], np.eye(2, 8, dtype=np.float32)
    facts = [{"head_entity_id": "0a", "relation": "works_at", "tail_entity_id": "0b"}]
    sync_structure(db, "c__structure", ids, vectors, facts, RGCNConfig(epochs=2))
    sync_structure(db, "c__structure", [], np.zeros((0, 8), np.float32), [], RGCNConfig())
    table = db.open_table("c__structure")
    rows = kgermar._structure_rows(SimpleNamespace(cache={}), table)
    assert rows is not None and rows.ids == []
    assert rows.nearest(np.ones(rows.vectors.shape[1], np.float32), 5) == []


def test_the_structural_bank_scores_its_candidates_beyond_k_on_a_log_scale(graph_memory) -> None:
    from memory.snapshot_view import QueryContext
    from memory.strategies.kgermar_fusion import retrieve_banks

    banks = retrieve_banks(
        graph_memory._view, QueryContext("Where does Priya Natarajan work?", 2), 2
    )
    structural = banks.raw["structural"]
    assert len(structural) > 2, "the structural bank hands the blend more than k candidates"
    scores = [score for _, score in structural]
    assert scores == sorted(scores, reverse=True)
    assert min(scores) < 0, "log of products below 1"
    scaled = banks.normalised["structural"]
    assert max(scaled.values()) == 1.0
    assert 0 < min(scaled.values()) < 1, "the last candidate stays above an absent segment"
    assert banks.normalised["contextual"][banks.raw["contextual"][-1][0]] > 0


def test_a_view_reads_the_fitted_weights_again_after_the_recheck_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-lived view reads the weights file once per `RECHECK_SECONDS`: weights
    written meanwhile are used from the first query after that."""
    clock = [100.0]
    monkeypatch.setattr(fusion_weights.time, "monotonic", lambda: clock[0])
    view = types.SimpleNamespace(
        cache={}, home=tmp_path, snapshot=types.SimpleNamespace(collection="docs")
    )
    assert resolve_weights(view, {})[1].startswith("default")
    write_fitted(tmp_path, "docs", {"weights": [0, 1, 0]})
    clock[0] += fusion_weights.RECHECK_SECONDS / 2
    assert resolve_weights(view, {})[1].startswith("default")
    clock[0] += fusion_weights.RECHECK_SECONDS
    weights, source = resolve_weights(view, {})
    assert source.startswith("fitted") and weights == {
        "contextual": 0,
        "semantic": 1,
        "structural": 0,
    }
