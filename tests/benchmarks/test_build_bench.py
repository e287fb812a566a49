"""The synthetic corpus generator (deterministic, distinct entities, loadable, facts come out of
a real build) and `kgmem bench build` end to end at a tiny size (every figure present, no
LLM call on re-run, nothing redone on an unchanged re-run). No timing assertions."""

from __future__ import annotations

import functools
import json
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import pytest

from benchmarks import corpus_generator as gen
from benchmarks.build_cost import (
    COLLECTION,
    SEGMENT_ENCODER,
    BareModels,
    EncoderTiming,
    MemoryPoint,
    marginal_mib_per_1k_facts,
    parse_sizes,
    uniform_sample,
)
from benchmarks.process_memory import own_peak_rss_mib
from benchmarks.worker_start import start_worker
from kgmem.cli import main
from kgmem.cli.common import LOG_FILE, route_library_logs
from stores.workspace import Workspace
from transforms.loaders import load_inputs
from transforms.relation_registry import RelationRegistry

DOCUMENTS, SIZES, STRATEGIES = 8, (2, 4), ("dense", "hipporag_ppr")
SAMPLE_NAMES = ("Acme", "Priya", "Natarajan", "Kowalski", "Whitfield", "Bennett", "Okafor",
                "Harborview", "Northgate", "Cedar Point", "Inkwell", "Tonerline", "E-42",
                "Rotterdam", "Brightpage")  # fmt: skip


def test_same_seed_same_collection_other_seed_other_names(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    gen.generate_collection(a, 30, seed=3)
    gen.generate_collection(b, 30, seed=3)
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert len(files) == 30 + gen.default_conversations(30)
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    assert gen.CorpusGenerator(3).document(7) == gen.CorpusGenerator(3).document(7)
    assert gen.CorpusGenerator(4).company(0).people != gen.CorpusGenerator(3).company(0).people


def test_appended_documents_leave_the_first_ones_unchanged(tmp_path: Path) -> None:
    generator = gen.CorpusGenerator(0)
    generator.write(tmp_path, range(12))
    before = {p.name: p.read_text() for p in (tmp_path / "documents").iterdir()}
    generator.write(tmp_path, range(12, 14))
    after = {p.name: p.read_text() for p in (tmp_path / "documents").iterdir()}
    assert len(after) == 14 and all(after[name] == text for name, text in before.items())


def test_entities_are_distinct_and_not_the_sample_corpus() -> None:
    generator = gen.CorpusGenerator(0)
    companies = [generator.company(i) for i in range(gen.companies_of(10_100))]
    kinds = {
        "people": [p for c in companies for p in c.people],
        "companies": [c.name for c in companies],
        "stems": [c.stem for c in companies],
        "offices": [o for c in companies for o in c.offices],
        "teams": [t for c in companies for t in c.teams],
        "products": [p for c in companies for p in c.products],
        "codes": [k for c in companies for k in c.codes],
    }
    for kind, names in kinds.items():
        assert len(set(names)) == len(names), f"repeated {kind}"
    every = {n for names in kinds.values() for n in names}
    assert not any(s in n for s in SAMPLE_NAMES for n in every)
    texts = " ".join(d.text for d in generator.documents(range(220)))
    assert not any(s in texts for s in SAMPLE_NAMES)


def test_capacity_is_enforced(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at most"):
        gen.generate_collection(tmp_path, gen.CorpusGenerator.max_documents() + 1)


def test_generated_files_load_with_the_project_loaders(tmp_path: Path) -> None:
    gen.generate_collection(tmp_path, 12)
    loaded = load_inputs("bench", [tmp_path / "documents", tmp_path / "conversations"])
    assert not loaded.quarantined
    kinds = [d["kind"] for d in loaded.documents]
    assert kinds.count("document") == 12 and kinds.count("conversation") == 1
    docs = {d["title"]: d for d in loaded.documents if d["kind"] == "document"}
    expected = gen.CorpusGenerator(0).documents(range(12))
    assert set(docs) == {d.title for d in expected}
    for doc in expected:
        assert docs[doc.title]["doc_time"].date() == doc.day
        assert 40 <= len(doc.body.split()) <= 200
    turns = json.loads(
        next(d for d in loaded.documents if d["kind"] == "conversation")["turns_json"]
    )
    assert len(turns) == 6 and turns[0]["speaker"] != turns[1]["speaker"]


def test_questions_name_generated_entities() -> None:
    generator = gen.CorpusGenerator(0)
    asked = gen.questions(generator, 22, 10)
    names = {n for d in generator.documents(range(22)) for f in d.facts for n in (f.head, f.tail)}
    assert len(asked) == 10 and all(any(n in q for n in names) for q in asked)


def test_bare_seconds_add_segment_models_and_encoders() -> None:
    encoders = [
        EncoderTiming("main encoder", "m", texts=300, unmatched=0, sampled=100, per_s=100.0),
        EncoderTiming("fusion encoder", "f", texts=90, unmatched=10, sampled=90, per_s=50.0),
    ]
    rates = {"ner (spacy)": 200.0, "spacy parse": 100.0, SEGMENT_ENCODER: 80.0}
    bare = BareModels(50, rates, 40.0, build_segments=400, encoders=encoders)
    assert bare.segment_model_seconds == 2.0 + 4.0  # the segment encoder is an encoder row
    assert bare.seconds == 6.0 + 3.0 + 2.0
    assert uniform_sample(list("abcdef"), 3) == ["a", "c", "e"]
    assert uniform_sample(list("ab"), 3) == ["a", "b"] == uniform_sample(list("ab"), None)


def test_size_parsing_and_marginal_growth() -> None:
    assert parse_sizes("1_000,5000") == [1000, 5000]
    with pytest.raises(ValueError):
        parse_sizes("1000")
    points = [MemoryPoint(10, 2000, 200, 1.0, 500.0), MemoryPoint(50, 10_000, 900, 4.0, 580.0)]
    assert marginal_mib_per_1k_facts(points) == 10.0
    assert points[0].mib_per_1k_facts == 250.0
    assert own_peak_rss_mib() > 0


def test_a_memory_point_process_sends_library_logs_to_the_log_file(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The worker start `memory_point` gives its spawned build process, with the CLI's
    log routing as `worker_setup`, keeps what the bench's modules log as they load (Beam's
    "apitools not found") and a library's later warning off the terminal."""
    setup = functools.partial(route_library_logs, tmp_path, False)
    start = functools.partial(start_worker, setup)
    work = "import benchmarks.build_cost, logging\n" + (
        "logging.getLogger('apache_beam').warning('a library warning')"
    )
    with ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=start) as pool:
        pool.submit(exec, work).result()
    terminal = capfd.readouterr().err
    assert "apitools" not in terminal and "a library warning" not in terminal
    assert "a library warning" in (tmp_path / LOG_FILE).read_text()


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    home = tmp_path_factory.mktemp("bench_build")
    output = home / "out.json"
    args = ["bench", "build", "--documents", str(DOCUMENTS), "--sizes", ",".join(map(str, SIZES)),
            "--queries", "3", "--strategies", ",".join(STRATEGIES), "--home", str(home),
            "--json-out", str(output)]  # fmt: skip
    assert main(args) == 0
    return json.loads(output.read_text()), home


@pytest.mark.slow
def test_bench_build_reports_every_figure(bench_run: tuple[dict, Path]) -> None:
    result, _ = bench_run
    assert result["documents"] == DOCUMENTS and result["llm_backend"] == "none"
    assert result["throughput_segments_per_s"] > 0 and result["segments"] > DOCUMENTS
    bare = result["bare_models"]
    assert {"ner (spacy)", "spacy parse", "sentence encoder"} <= set(bare["per_model"])
    assert 0 < bare["combined_per_s"] < min(bare["per_model"].values())
    encoders = {e["label"]: e for e in bare["encoders"]}
    assert set(encoders) == {"main encoder", "span-pooled windows", "fusion encoder"}
    for encoder in encoders.values():  # every text the cache holds was recovered
        assert encoder["unmatched"] == 0 and encoder["texts"] > 0 and encoder["per_s"] > 0
    assert encoders["main encoder"]["texts"] > result["segments"] == bare["build_segments"]
    assert bare["seconds_over_build_texts"] > bare["segment_model_seconds"] > 0
    ratios = result["ratios"]
    assert set(ratios) == {
        "build_over_bare_models",
        "full_build_over_bare_seconds",
        "rerun_unchanged_over_full",
        "rerun_1pct_new_over_full",
    }
    assert all(v > 0 for v in ratios.values())
    assert result["rerun_llm_calls"] == 0 and result["rerun_1pct_llm_calls"] == 0
    memory = result["memory"]
    assert [m["documents"] for m in memory] == list(SIZES)
    assert memory[0]["facts"] < memory[1]["facts"]
    assert all(m["peak_rss_mib"] > 0 and m["mib_per_1k_facts"] > 0 for m in memory)
    assert result["memory_marginal_mib_per_1k_facts"] is not None
    rows = {r["strategy"]: r for r in result["latency"]["rows"]}
    assert set(rows) == set(STRATEGIES) and not any(r["error"] for r in rows.values())
    assert rows["dense"]["ratio_to_dense"] == {"p50": 1.0, "p95": 1.0}
    assert all(r["ratio_to_dense"]["p50"] and r["ratio_to_dense"]["p95"] for r in rows.values())


def test_rerun_redoes_nothing_and_new_documents_are_built(bench_run: tuple[dict, Path]) -> None:
    result, _ = bench_run
    full, unchanged, new = result["builds"]
    assert full["documents"] == DOCUMENTS and new["documents"] == DOCUMENTS + 1
    assert all(s["skipped"] for s in unchanged["stages"])
    by_stage = {s["stage"]: s for s in new["stages"]}
    assert not by_stage["raw_documents"]["skipped"] and not by_stage["fact_versions"]["skipped"]


def test_generated_facts_come_out_of_the_build(bench_run: tuple[dict, Path]) -> None:
    """The templates are ones the extractors read: most stated facts are in the memory."""
    _, home = bench_run
    con = Workspace.at(home / "bench_build" / f"full-{DOCUMENTS}").connect(read_only=True)
    try:
        rows = con.execute(
            "SELECT DISTINCT head_name, relation, tail_name FROM fact_versions "
            "WHERE collection = ?",
            [COLLECTION],
        ).fetchall()
    finally:
        con.close()
    built = {(_norm(h), r, _norm(t)) for h, r, t in rows}
    generator, registry = gen.CorpusGenerator(0), RelationRegistry()
    stated = [f for d in generator.documents(range(DOCUMENTS + 1)) for f in d.facts]
    stated += generator.conversation(0, gen.companies_of(DOCUMENTS)).facts
    found = [
        f
        for f in stated
        if (_norm(f.head), registry.canonical(f.relation, False)[0], _norm(f.tail)) in built
    ]
    assert len(stated) > 20 and len(found) >= 0.8 * len(stated)


def _norm(name: str) -> str:
    name = name.lower()
    return name.removeprefix("the ")
