"""The flat signals' fast paths answer exactly as the plain ones: the retrievable prefilter
dropped where it keeps every row, the full-text search run beside the dense one, fused
rankings kept per query, and segment rows read value by value."""

from __future__ import annotations

import dataclasses
from concurrent.futures import Future
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from memory import linking
from memory.linking import full_text_segments, similar_segments
from memory.snapshot_view import RETRIEVABLE_FILTER, QueryContext, SnapshotView
from memory.strategies import hybrid
from schemas.tables import VECTOR, VECTOR_FUSION
from stores.lance_tables import build_indexes
from stores.workspace import lance_table_name

QUERIES = [
    "Who leads the Firmware team?",
    "printer error E-42",
    "Where did Priya work in 2021?",
    "Acme Corporation",
    "the of and",
]


def _plain_similar(view: SnapshotView, text: str, k: int, column: str = VECTOR) -> list:
    """The search as it ran before the fast paths: prefiltered, read as a list."""
    model = view.fusion_encoder if column == VECTOR_FUSION else None
    hits = (
        view.table("segments")
        .search(view.embed_query(text, model), vector_column_name=column)
        .where(RETRIEVABLE_FILTER, prefilter=True)
        .select(["segment_id", "_distance"])
        .limit(k)
        .to_list()
    )
    return [(h["segment_id"], round(1.0 - h["_distance"] / 2.0, 6)) for h in hits]


def _plain_full_text(view: SnapshotView, text: str, k: int) -> list:
    hits = (
        view.table("segments")
        .search(text, query_type="fts")
        .where(RETRIEVABLE_FILTER, prefilter=True)
        .select(["segment_id", "_score"])
        .limit(k)
        .to_list()
    )
    return [(h["segment_id"], round(float(h["_score"]), 6)) for h in hits]


def _fresh(view: SnapshotView) -> SnapshotView:
    return SnapshotView(view.snapshot, view.connect, view.db, view.index_dir, home=view.home)


@pytest.fixture(scope="module")
def view(graph_memory) -> SnapshotView:
    return _fresh(graph_memory._view)


@pytest.fixture(scope="module")
def with_sessions(view, tmp_path_factory) -> SnapshotView:
    """The sample's segments plus a copy of each as a session segment (not retrievable, and
    as similar to any query as its original), indexed as a build indexes them."""
    import lancedb

    rows = view.table("segments").to_arrow()
    sessions = rows.set_column(
        rows.schema.get_field_index("kind"), "kind", pa.array(["session"] * rows.num_rows)
    ).set_column(
        rows.schema.get_field_index("segment_id"),
        "segment_id",
        pc.binary_join_element_wise(rows.column("segment_id"), "-session", ""),
    )
    db = lancedb.connect(tmp_path_factory.mktemp("with_sessions"))
    table = db.create_table(
        lance_table_name(view.snapshot.collection, "segments"), pa.concat_tables([rows, sessions])
    )
    build_indexes(table, "search_text")
    snapshot = dataclasses.replace(
        view.snapshot, lance_versions={"segments": table.version}, created_at=datetime.now(UTC)
    )
    return SnapshotView(snapshot, view.connect, db)


def test_a_filter_that_keeps_every_row_is_dropped_without_changing_a_result(view) -> None:
    """A build's segments table holds only retrievable kinds, as the sample's does. The
    searches are LanceDB's here: a view without the mapped index (with it, the unindexed
    sample is searched by the exact product, `test_exact_segments`, and the full text by
    the index's postings, `test_lexical_search`)."""
    assert view.retrievable_filter is None
    scanned = SnapshotView(view.snapshot, view.connect, view.db, home=view.home)
    assert scanned.retrievable_filter is None and scanned.exact_segments is None
    for text in QUERIES:
        for k in (5, 50):
            fast = similar_segments(scanned, text, k)
            assert fast == _plain_similar(view, text, k) and fast
            assert full_text_segments(scanned, text, k) == _plain_full_text(view, text, k)
    second = similar_segments(view, QUERIES[0], 20, second_encoder=True)
    assert second == _plain_similar(view, QUERIES[0], 20, VECTOR_FUSION)


def test_the_filter_is_kept_where_some_segments_are_not_retrievable(with_sessions) -> None:
    assert with_sessions.retrievable_filter == RETRIEVABLE_FILTER
    for text in QUERIES:
        dense = similar_segments(with_sessions, text, 20)
        assert dense == _plain_similar(with_sessions, text, 20)
        lexical = full_text_segments(with_sessions, text, 20)
        assert lexical == _plain_full_text(with_sessions, text, 20)
        assert not any(s.endswith("-session") for s, _ in dense + lexical)


class _Inline:
    """An executor that runs each task where it is submitted: the sequential path."""

    def submit(self, task, *args):
        done: Future = Future()
        done.set_result(task(*args))
        return done


def test_the_concurrent_signals_fuse_as_the_sequential_ones(view, monkeypatch) -> None:
    queries = [QueryContext(text, k) for text in QUERIES for k in (3, 40)]
    concurrent = [hybrid.hybrid_ranking(_fresh(view), q) for q in queries]
    monkeypatch.setattr(linking, "_SEARCHES", _Inline())
    sequential = [hybrid.hybrid_ranking(_fresh(view), q) for q in queries]
    assert concurrent == sequential
    assert any(fused for fused, _ in concurrent)


def test_strategies_answer_alike_with_their_searches_run_in_turn(graph_memory, monkeypatch):
    """Every strategy that starts searches beside its own work (hybrid's full text, the
    KGERMAR banks, the flat prior of the graph strategies) ranks as when they run in turn."""
    from memory import Memory

    queries = [(text, k) for text in QUERIES for k in (3, 12)]

    def answers() -> list:
        memory = Memory(_fresh(graph_memory._view))
        return [
            [(h.segment_id, h.score) for h in memory.query(text, strategy=s, k=k)]
            for s in ("hybrid", "kgermar_fusion", "gram_paths")
            for text, k in queries
        ]

    concurrent = answers()
    monkeypatch.setattr(linking, "_SEARCHES", _Inline())
    assert answers() == concurrent


def test_fused_rankings_are_kept_per_query_text_pool_and_options(view) -> None:
    fresh = _fresh(view)
    first = hybrid.hybrid_ranking(fresh, QueryContext(QUERIES[0], 5))
    assert hybrid.hybrid_ranking(fresh, QueryContext(QUERIES[0], 20)) is first  # pool 50
    assert hybrid.hybrid_ranking(fresh, QueryContext(QUERIES[0], 30)) is not first
    lexical = {"hybrid_weights": {"documents": {"bm25": 1.0}, "conversations": {"bm25": 1.0}}}
    weighted = hybrid.hybrid_ranking(fresh, QueryContext(QUERIES[0], 5, options=lexical))
    assert weighted is not first and weighted[0] != first[0]
    for text in QUERIES * 3:
        hybrid.hybrid_ranking(fresh, QueryContext(text + "?", 5))
    assert len(fresh.cache["hybrid_rankings"]) == hybrid.KEPT_RANKINGS


def test_segment_rows_read_value_by_value_equal_a_row_slice(view) -> None:
    for row, segment_id in enumerate(view.segments.column("segment_id").to_pylist()):
        whole = view.segments.slice(row, 1).to_pylist()[0]
        assert view.segment(segment_id) == whole
        assert view.segment(segment_id, ("kind", "doc_id")) == {
            "kind": whole["kind"],
            "doc_id": whole["doc_id"],
        }


@pytest.mark.parametrize("strategy", ["hipporag_ppr", "gram_paths"])
def test_graph_work_kept_per_query_ranks_as_computed_afresh(graph_memory, strategy) -> None:
    """A graph strategy asked again with another k (as `Memory.query` widens its fetch)
    reuses its kept walk or path search, and answers each k exactly as a fresh view."""
    from memory.strategies.registry import STRATEGIES

    run = STRATEGIES[strategy]
    reused = _fresh(graph_memory._view)
    for text in QUERIES:
        for k in (3, 6, 12, 30):
            query = QueryContext(text, k)
            kept = run(reused, query)
            fresh = run(_fresh(graph_memory._view), query)
            assert (kept.scored, kept.explanation, kept.paths) == (
                fresh.scored,
                fresh.explanation,
                fresh.paths,
            )
    assert len(reused.cache["graph_work"]) == hybrid.KEPT_RANKINGS


def test_kgermar_banks_are_the_heads_of_the_prior_signals(graph_memory) -> None:
    """KGERMAR's contextual and semantic banks, read from the flat prior's signal lists,
    are the lists searches of their own budget return, up to which of the segments tied
    at the last score fill the last places (a search of another limit breaks such ties
    its own way): the same scores, and the same segments above the last score."""
    from memory.strategies.kgermar_fusion import retrieve_banks

    view = _fresh(graph_memory._view)
    for text in QUERIES:
        for k in (3, 10, 25):
            banks = retrieve_banks(view, QueryContext(text, k), k)
            own = {
                "contextual": full_text_segments(view, text, k),
                "semantic": linking.nearest_segments(view, view.embed_query(text), k),
            }
            for name, scored in own.items():
                head = banks.raw[name]
                assert [s for _, s in head] == [s for _, s in scored], (name, text, k)
                last = min((s for _, s in scored), default=0.0)
                assert {h for h in head if h[1] > last} == {h for h in scored if h[1] > last}


def test_bm25_answers_each_k_from_one_kept_search(graph_memory, monkeypatch) -> None:
    """`bm25` asked with k = 3, 6, 12, 30 (as `Memory.query` widens its fetch) runs one
    full-text search of the pool per query text, and each answer is a search of its own
    limit up to the order of tied segments: the same scores, the same segments at each
    score above the last."""
    from memory.strategies import bm25 as module

    view = _fresh(graph_memory._view)
    searched: list[int] = []

    def counted(v: SnapshotView, text: str, k: int) -> list:
        searched.append(k)
        return full_text_segments(v, text, k)

    monkeypatch.setattr(module, "full_text_segments", counted)
    for text in QUERIES:
        searched.clear()
        for k in (3, 6, 12, 30):
            head = module.bm25(view, QueryContext(text, k)).scored
            own = full_text_segments(view, text, k)
            assert [s for _, s in head] == [s for _, s in own], (text, k)
            last = min((s for _, s in own), default=0.0)
            assert {h for h in head if h[1] > last} == {h for h in own if h[1] > last}
        assert searched == [hybrid.POOL], text
        module.bm25(view, QueryContext(text, 2 * hybrid.POOL))
        assert searched == [hybrid.POOL, 2 * hybrid.POOL]
