"""The synthetic memory generator writes consistent stores that every strategy can query, and
`kgmem bench retrieval` reports p50/p95 and ratios to dense per strategy (no timing checks)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import retrieval_latency, synthetic_memory
from benchmarks.retrieval_latency import StrategyLatency, parse_sizes, with_ratios
from kgmem.cli import main
from memory import Memory
from memory.strategies.registry import STRATEGIES
from stores.workspace import Workspace, lance_table_name

FACTS = 2_000
MEASURED = ("dense", "bm25", "hipporag_ppr")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> synthetic_memory.SyntheticSummary:
    root = tmp_path_factory.mktemp("synthetic") / "ws"
    return synthetic_memory.cached(root, FACTS)


def test_counts_in_equal_counts_out(synthetic: synthetic_memory.SyntheticSummary) -> None:
    workspace = Workspace.at(synthetic.root)
    db = workspace.lance()
    lance = {
        kind: db.open_table(lance_table_name(synthetic.collection, kind)).count_rows()
        for kind in ("segments", "entities", "facts")
    }
    con = workspace.connect(read_only=True)
    try:
        versions, distinct_facts = con.execute(
            "SELECT count(*), count(DISTINCT fact_id) FROM fact_version_log"
        ).fetchone()
        entities = con.execute("SELECT count(*) FROM entities").fetchone()[0]
        triples = con.execute(
            "SELECT count(DISTINCT (head_entity_id, relation, tail_entity_id)) "
            "FROM fact_version_log"
        ).fetchone()[0]
    finally:
        con.close()
    assert synthetic.facts == lance["facts"] == versions == distinct_facts == triples == FACTS
    assert synthetic.entities == lance["entities"] == entities
    assert synthetic.segments == lance["segments"] > FACTS // synthetic_memory.FACTS_PER_SEGMENT
    for kind in ("contexts", "structure"):
        if kind in synthetic_memory.snapshots.LANCE_KINDS:
            table = db.open_table(lance_table_name(synthetic.collection, kind)).to_arrow()
            assert 0 < table.num_rows <= entities
            assert set(table.column("entity_id").to_pylist()) <= set(
                db.open_table(lance_table_name(synthetic.collection, "entities"))
                .to_arrow()
                .column("entity_id")
                .to_pylist()
            )


def test_facts_link_existing_entities_and_segments(
    synthetic: synthetic_memory.SyntheticSummary,
) -> None:
    workspace = Workspace.at(synthetic.root)
    db = workspace.lance()
    segments = db.open_table(lance_table_name(synthetic.collection, "segments")).to_arrow()
    entities = db.open_table(lance_table_name(synthetic.collection, "entities")).to_arrow()
    con = workspace.connect(read_only=True)
    try:
        con.register("lance_segments", segments.select(["segment_id", "entity_ids", "text"]))
        con.register("lance_entities", entities.select(["entity_id", "name"]))
        orphans = con.execute(
            """
            SELECT count(*) FROM fact_version_log f
            WHERE f.head_entity_id NOT IN (SELECT entity_id FROM lance_entities)
               OR f.tail_entity_id NOT IN (SELECT entity_id FROM lance_entities)
               OR f.head_entity_id = f.tail_entity_id
            """
        ).fetchone()[0]
        unsupported = con.execute(
            """
            SELECT count(*) FROM fact_version_log f
            LEFT JOIN lance_segments s ON s.segment_id = f.source_segment_ids[1]
            WHERE s.segment_id IS NULL
               OR NOT list_contains(s.entity_ids, f.head_entity_id)
               OR NOT list_contains(s.entity_ids, f.tail_entity_id)
               OR NOT contains(s.text, f.head_name) OR NOT contains(s.text, f.tail_name)
            """
        ).fetchone()[0]
        names, distinct_names = con.execute(
            "SELECT count(*), count(DISTINCT name) FROM lance_entities"
        ).fetchone()
    finally:
        con.close()
    assert orphans == 0
    assert unsupported == 0
    assert names == distinct_names
    vectors = segments.column("vector").combine_chunks().flatten().to_numpy()
    norms = (vectors.reshape(segments.num_rows, -1) ** 2).sum(axis=1)
    assert norms == pytest.approx(1.0, abs=1e-4)


def _question(synthetic: synthetic_memory.SyntheticSummary) -> str:
    """A generated question about the synthetic workspace's facts."""
    con = Workspace.at(synthetic.root).connect(read_only=True)
    try:
        return synthetic_memory.synthetic_questions(con, 1)[0]
    finally:
        con.close()


def test_every_strategy_answers_a_generated_question(
    synthetic: synthetic_memory.SyntheticSummary,
) -> None:
    question = _question(synthetic)
    with Memory.open(synthetic.root) as memory:
        assert memory.snapshot.snapshot_id == synthetic.snapshot_id
        assert memory.snapshot.counts["facts"] == FACTS
        for strategy in STRATEGIES:
            result = memory.query(question, strategy=strategy, k=5)
            assert result.hits, f"{strategy} returned nothing for {question!r}"
            json.dumps(result.explanation)


def test_measured_queries_get_the_strategy_options(
    synthetic: synthetic_memory.SyntheticSummary,
) -> None:
    """`kgmem bench retrieval --option` reaches the strategy: an unreadable value fails."""
    question = _question(synthetic)
    args = (str(synthetic.root), synthetic_memory.COLLECTION, "gram_paths", question, [question])
    figures = retrieval_latency.measure_in_process(*args, {"max_length": 1})
    assert len(figures["seconds"]) == 1
    with pytest.raises(ValueError, match="not-a-number"):
        retrieval_latency.measure_in_process(*args, {"max_length": "not-a-number"})


def test_a_measuring_process_loads_no_model_library(
    synthetic: synthetic_memory.SyntheticSummary,
) -> None:
    """Each strategy is measured in a fresh process: its base memory and first query must
    not include torch or spaCy, which no query needs."""
    script = (
        "import sys\n"
        "from benchmarks.retrieval_latency import measure_in_process\n"
        "from benchmarks.synthetic_memory import COLLECTION\n"
        "for strategy in ('dense', 'hipporag_ppr'):\n"
        "    measure_in_process(sys.argv[1], COLLECTION, strategy, 'Who?', ['Where?'])\n"
        "heavy = ('torch', 'transformers', 'sentence_transformers', 'spacy', 'dagster')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(synthetic.root)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_cached_workspace_is_reused(synthetic: synthetic_memory.SyntheticSummary) -> None:
    marker = synthetic_memory.MARKER
    before = (Workspace.at(synthetic.root).root / marker).stat().st_mtime_ns
    again = synthetic_memory.cached(synthetic.root, FACTS)
    assert again == synthetic
    assert (Workspace.at(synthetic.root).root / marker).stat().st_mtime_ns == before


def test_unknown_snapshot_kind_fails_clearly(tmp_path, monkeypatch) -> None:
    kinds = {**synthetic_memory.snapshots.LANCE_KINDS, "mystery": ("id", ("text",))}
    monkeypatch.setattr(synthetic_memory.snapshots, "LANCE_KINDS", kinds)
    with pytest.raises(ValueError, match="mystery"):
        synthetic_memory.generate(tmp_path / "ws", 50)


def test_generated_names_are_distinct_across_types() -> None:
    entities = synthetic_memory.make_entities(40_000)
    assert entities.get_column("name").n_unique() == entities.height
    words = [synthetic_memory.word(i) for i in range(20_000)]
    assert len(set(words)) == len(words)


def test_sizes_and_ratios() -> None:
    assert parse_sizes("sample, 100_000,2000") == ["sample", "100000", "2000"]
    with pytest.raises(ValueError):
        parse_sizes("sample,lots")
    rows = [
        StrategyLatency("s", "dense", 3, 5.0, 2.0, 4.0),
        StrategyLatency("s", "bm25", 3, 1.0, 1.0, 6.0),
        StrategyLatency("s", "broken", 3, error="RuntimeError: no"),
    ]
    ratios = {r.strategy: r.ratio_to_dense for r in with_ratios(rows)}
    assert ratios == {
        "dense": {"p50": 1.0, "p95": 1.0},
        "bm25": {"p50": 0.5, "p95": 1.5},
        "broken": {"p50": None, "p95": None},
    }


@pytest.fixture(scope="module")
def bench_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `--home` of the CLI runs: the second finds the synthetic workspace generated."""
    return tmp_path_factory.mktemp("bench_home")


@pytest.mark.slow
def test_cli_bench_retrieval_end_to_end(tmp_path, bench_home, monkeypatch, capsys) -> None:
    monkeypatch.setenv("KGMEM_HOME", str(tmp_path / "unused"))
    output = tmp_path / "latency.json"
    # each strategy runs in a process of its own: three show the command end to end (every
    # strategy answering is test_every_strategy_answers_a_generated_question's)
    argv = ["bench", "retrieval", "--sizes", "300", "--queries", "2"]
    argv += ["--strategies", ",".join(MEASURED)]
    argv += ["--json-out", str(output), "--home", str(bench_home), "--option", "vector_probes=0"]
    assert main(argv) == 0
    payload = json.loads(output.read_text())
    assert payload["options"] == {"vector_probes": 0} and payload["warm_cache"] is True
    [size] = payload["sizes"]
    assert size["size"] == "300" and size["counts"]["facts"] == 300
    assert size["warmed_mib"] > 0, "the snapshot's files were read into the page cache"
    assert size["peak_rss_mib"] == max(r["peak_rss_mib"] for r in size["rows"])
    rows = {r["strategy"]: r for r in size["rows"]}
    assert list(rows) == list(MEASURED)
    for name, row in rows.items():
        assert row["error"] is None, f"{name}: {row['error']}"
        assert row["queries"] == 2
        assert 0 < row["p50_ms"] <= row["p95_ms"]
        assert row["first_query_ms"] > 0 and 0 < row["base_rss_mib"] <= row["peak_rss_mib"]
        assert row["ratio_to_dense"]["p50"] == round(row["p50_ms"] / rows["dense"]["p50_ms"], 3)
        assert row["ratio_to_dense"]["p95"] == round(row["p95_ms"] / rows["dense"]["p95_ms"], 3)
    assert rows["dense"]["ratio_to_dense"] == {"p50": 1.0, "p95": 1.0}
    assert "measured" not in payload, "the partial rows give way to the finished sizes"
    assert (bench_home / "bench_retrieval" / "synthetic-300" / "synthetic.json").exists()
    printed = capsys.readouterr().out
    assert "p50/dense" in printed and "first query / build" in printed


@pytest.mark.slow
def test_cli_bench_retrieval_keeps_rows_measured_before_a_crash(
    tmp_path, bench_home, monkeypatch
) -> None:
    measured = retrieval_latency.measure

    def crash_on_second(
        target: retrieval_latency.Target,
        strategy: str,
        queries: int,
        hooks: retrieval_latency.Hooks,
        options: dict | None = None,
    ) -> StrategyLatency:
        if strategy == "bm25":
            raise MemoryError("killed while measuring bm25")
        return measured(target, strategy, queries, hooks, options)

    monkeypatch.setattr(retrieval_latency, "measure", crash_on_second)
    output = tmp_path / "latency.json"
    argv = ["bench", "retrieval", "--sizes", "300", "--queries", "1"]
    argv += ["--strategies", "bm25,gram_paths", "--json-out", str(output), "--no-warm-cache"]
    assert main([*argv, "--home", str(bench_home)]) == 2  # the crash is one line, exit 2
    payload = json.loads(output.read_text())
    assert payload["warm_cache"] is False
    assert [r["strategy"] for r in payload["measured"]] == ["dense"]
    assert all(r["p50_ms"] > 0 and r["size"] == "300" for r in payload["measured"])
