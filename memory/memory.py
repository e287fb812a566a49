"""`Memory`: open a snapshot and query it with a retrieval strategy.

    memory = Memory.open("kgmem_home", snapshot="snap-…")   # or the latest snapshot
    for hit in memory.query("Where does Priya Natarajan work?", strategy="hipporag_ppr", k=5):
        print(hit.score, hit.text, hit.provenance, hit.facts)

Every hit carries its provenance (document, title, source file, char offsets, observed
time, speaker, session, turn) and the facts it supports, as of the snapshot.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memory.facts import is_speculative
from memory.heap import keep_freed_memory
from memory.long_lived import freeze_long_lived, release_frozen
from memory.reranker import RERANK_DEPTH, rerank_scores, reranked_order
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking
from memory.strategies.options import check_options
from memory.strategies.registry import STRATEGIES
from stores.data_url import check_reachable
from stores.graph_index import fetch_graph_index, graph_index_dir
from stores.snapshots import Snapshot, list_snapshots, reader_collection
from stores.workspace import Workspace
from transforms.consolidation import normalize_name
from transforms.cpu_lanes import one_blas_thread
from transforms.reported_speech import only_reported


@dataclass
class QueryHit:
    """One retrieved segment with its score, provenance and supported facts."""

    rank: int
    score: float
    segment_id: str
    text: str
    provenance: dict[str, Any]
    facts: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    """Graph paths that led the strategy here, GRAM-linearized (`[s] -[p]-> [o] ; …`)."""
    evidence: list[dict[str, Any]] = field(default_factory=list)
    """Other segments of the same passage that the strategy ranked, best first: segment
    id, char offsets and score (the hit itself is the passage's best segment)."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class QueryResult:
    """Hits of one query with the strategy's explanation and the snapshot it ran on."""

    snapshot_id: str
    strategy: str
    hits: list[QueryHit]
    explanation: dict[str, Any]

    def __iter__(self) -> Iterator[QueryHit]:
        return iter(self.hits)

    def as_dict(self) -> dict[str, Any]:
        return {
            "snapshot_id": self.snapshot_id,
            "strategy": self.strategy,
            "explanation": self.explanation,
            "hits": [h.as_dict() for h in self.hits],
        }


UNITS = ("passage", "segment", "session")
"""What a hit is: a passage (a document's chunks collapse into its best one; a turn is a
passage of its own), a bare segment, or a session (a conversation session's turns collapse
into its best one, the others listed as its evidence; a document's chunks, which belong to
no session, collapse as passages do)."""


class Memory:
    """A queryable, immutable memory snapshot."""

    OVERFETCH = 4
    """With a reference time, strategies rank this many times k before time filtering."""
    MAX_FETCH_FACTOR = 64
    """To fill k distinct passages, segments asked of a strategy double up to this times k."""

    def __init__(self, view: SnapshotView) -> None:
        self._view = view
        self._queried = False

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        snapshot: str | None = None,
        collection: str | None = None,
    ) -> Memory:
        """Open `snapshot` (default: the newest of `collection`, which may be left out only
        when the workspace holds one collection: `stores.snapshots.reader_collection`) of a
        workspace (with its data URL, recorded or from `KGMEM_DATA_URL`, checked reachable
        here so that a wrong endpoint fails at once, in one line). The process's heap keeps
        freed memory from then on (`memory.heap`), and the objects alive once the snapshot
        is open, and again after its first query, are frozen out of the cyclic garbage
        collector's full walks (`memory.long_lived`)."""
        keep_freed_memory()
        workspace = Workspace.at(path)
        con = workspace.connect(read_only=True)
        try:
            snapshots = list_snapshots(con, collection)
        finally:
            con.close()
        chosen = _choose(snapshots, snapshot, collection, workspace)
        connect = functools.partial(workspace.connect, read_only=True)
        index_dir = graph_index_dir(workspace, chosen.snapshot_id)
        fetch = None
        if workspace.data_is_remote:
            check_reachable(workspace.data)
            fetch = functools.partial(fetch_graph_index, workspace, chosen.snapshot_id)
        view = SnapshotView(
            chosen, connect, workspace.lance(), index_dir, fetch, home=workspace.root
        )
        freeze_long_lived()
        return cls(view)

    def close(self) -> None:
        """Drop what the view cached (tables, graphs, vectors) and unfreeze the objects
        frozen since open (`memory.long_lived`), so the collector frees what the view
        held in reference cycles. An open `Memory` holds no warehouse connection, so a
        build into the same workspace never waits for it."""
        self._view.cache.clear()
        release_frozen()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def snapshot(self) -> Snapshot:
        return self._view.snapshot

    def entity(self, name: str) -> dict[str, Any] | None:
        """The snapshot's entity whose name or alias is `name` (normalised as the query
        linker does): id, name, type and aliases; None if there is none."""
        entity_id = self._view.alias_index.get(normalize_name(name))
        if entity_id is None:
            return None
        entities = self._view.entities
        row = entities.slice(entities.column("entity_id").index(entity_id).as_py(), 1)
        fields = [c for c in ENTITY_FIELDS if c in row.column_names]
        return row.select(fields).to_pylist()[0]

    def query(
        self,
        text: str,
        strategy: str = "dense",
        k: int = 5,
        valid_at: datetime | None = None,
        options: Mapping[str, Any] | None = None,
        unit: str = "passage",
        reranker: str | None = None,
        rerank_depth: int = RERANK_DEPTH,
    ) -> QueryResult:
        """Rank `k` passages (or segments, with `unit="segment"`, or sessions, with
        `unit="session"`) for `text` with `strategy` (one of `STRATEGIES`).

        A passage is a document, for chunks (several chunks of one document collapse into
        the best-ranked one, the others listed in the hit's `evidence`), or a turn. A
        session is a conversation session: its turns collapse into the best-ranked one (a
        session ranks by its best evidence), the others, with their char spans, listed in
        the hit's `evidence`. The strategy is asked for more segments, doubling, until k
        distinct units are found or it has no more to give.
        With `valid_at`, facts are those valid at that time; segments observed after it are
        dropped unless they support such a fact (a later account of an earlier state), and
        segments whose mentioned years cover it rank before undated ones, which rank before
        segments about other years.
        Facts below θ_stable are used only when the query is speculative ("maybe", "guess").
        `options` go to the strategy (see its module docstring for the keys it reads).
        With `reranker` (a cross-encoder id or path), the first `rerank_depth` passages
        are put in the order of its scores (`memory.reranker`).
        """
        if strategy not in STRATEGIES:
            known = ", ".join(STRATEGIES)
            raise ValueError(f"unknown strategy {strategy!r}; choose one of {known}")
        if not text.strip():
            raise ValueError("the query text is empty")
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        if unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
        check_options(strategy, options or {})
        wanted = max(k, rerank_depth) if reranker else k
        fetch = wanted * self.OVERFETCH if valid_at else wanted
        depth = fetch  # the candidates' depth stays as the fetch widens (QueryContext.depth)
        while True:
            context = QueryContext(
                text, fetch, valid_at, is_speculative(text), dict(options or {}), depth
            )
            with one_blas_thread():  # the query's parallelism: transforms.cpu_lanes
                ranking: Ranking = STRATEGIES[strategy](self._view, context)
            in_time = [(s, score) for s, score in ranking.scored if self._in_time(s, context)]
            ordered = sorted(in_time, key=lambda hit: self._time_rank(hit[0], context))
            groups = (
                [[h] for h in ordered]
                if unit == "segment"
                else unit_groups(ordered, self._passage_row, unit)
            )
            exhausted = len(ranking.scored) < fetch or fetch >= wanted * self.MAX_FETCH_FACTOR
            if len(groups) >= wanted or exhausted:
                break
            fetch *= 2
        reranking: dict[str, Any] = {}
        if reranker:
            groups, reranking = self._rerank(text, groups, reranker, rerank_depth)
        hits = [
            self._hit(rank, group, context, ranking.paths.get(group[0][0], []))
            for rank, group in enumerate(groups[:k], 1)
        ]
        explanation = {
            **ranking.explanation,
            "valid_at": _iso(valid_at),
            "speculative": context.speculative,
            "unit": unit,
            **reranking,
        }
        if not self._queried:  # the structures the first query built live on
            self._queried = True
            freeze_long_lived()
        return QueryResult(self.snapshot.snapshot_id, strategy, hits, explanation)

    def _rerank(
        self, text: str, groups: list[list[tuple[str, float]]], model: str, depth: int
    ) -> tuple[list[list[tuple[str, float]]], dict[str, Any]]:
        """`groups` with the first `depth` in the cross-encoder's order, each scored by it."""
        head, tail = groups[:depth], groups[depth:]
        passages = [
            self._view.segment(group[0][0], ("search_text",))["search_text"] for group in head
        ]
        scores = rerank_scores(model, text, passages)
        order = reranked_order(scores)
        reordered = [[(head[i][0][0], round(scores[i], 6)), *head[i][1:]] for i in order]
        explanation = {
            "reranker": model,
            "rerank_depth": depth,
            "rank_before_reranking": [[head[i][0][0], i + 1] for i in order],
        }
        return reordered + tail, explanation

    def _passage_row(self, segment_id: str) -> dict[str, Any]:
        """The fields of a segment's row that `unit_groups` reads."""
        return self._view.segment(segment_id, PASSAGE_FIELDS)

    def _in_time(self, segment_id: str, context: QueryContext) -> bool:
        if context.valid_at is None:
            return True
        observed = self._view.segment(segment_id, ("observed_at",))["observed_at"]
        supported = bool(self._view.segment_facts(segment_id, context))
        return observed is None or observed <= context.valid_at or supported

    def _time_rank(self, segment_id: str, context: QueryContext) -> int:
        """0 if the segment talks about the reference time, 1 if it names no time, 2 if it
        names other times; a stable sort by this keeps the strategy's order within each."""
        if context.valid_at is None:
            return 0
        row = self._view.segment(segment_id, ("mentioned_from", "mentioned_to"))
        start, end = row["mentioned_from"], row["mentioned_to"]
        if start is None:
            return 1
        return 0 if start <= context.valid_at <= end else 2

    def _hit(
        self,
        rank: int,
        group: list[tuple[str, float]],
        context: QueryContext,
        paths: list[str],
    ) -> QueryHit:
        (segment_id, score), others = group[0], group[1:]
        row = self._view.segment(segment_id)
        provenance = {
            "doc_id": row["doc_id"],
            "title": row["title"],
            "source_path": row["source_path"],
            "kind": row["kind"],
            "char_start": row["char_start"],
            "char_end": row["char_end"],
            "observed_at": _iso(row["observed_at"]),
            "mentioned_from": _iso(row["mentioned_from"]),
            "mentioned_to": _iso(row["mentioned_to"]),
            "speaker": row["speaker"],
            "session_id": row["session_id"],
            "turn_id": row["turn_id"],
        }
        facts = [
            {
                "head": f["head_name"],
                "relation": f["relation"],
                "tail": f["tail_name"],
                "confidence": f["confidence"],
                "valid_from": _iso(f["valid_from"]),
                "valid_to": _iso(f["valid_to"]),
                "stable": f["stable"],
                "reported": only_reported(f["extractor"]),
                "version_id": f["version_id"],
            }
            for f in self._view.segment_facts(segment_id, context)
        ]
        evidence = [
            {
                "segment_id": other,
                **self._view.segment(other, ("char_start", "char_end")),
                "score": other_score,
            }
            for other, other_score in others
        ]
        return QueryHit(rank, score, segment_id, row["text"], provenance, facts, paths, evidence)


ENTITY_FIELDS = ("entity_id", "name", "entity_type", "aliases")
"""The fields of an entity that `Memory.entity` returns."""
PASSAGE_FIELDS = ("kind", "doc_id", "session_id")
"""The segment fields that decide its passage and its session (`unit_groups`)."""


def unit_groups(
    ranked: list[tuple[str, float]], row_of: Callable[[str], Mapping[str, Any]], unit: str
) -> list[list[tuple[str, float]]]:
    """`ranked` segments grouped by `unit`, "passage" (a document, for chunks; the turn
    itself otherwise) or "session" (a document, for chunks; the turn's conversation
    session otherwise), in the order of each unit's best segment; `row_of` gives a
    segment's row (its `kind`, `doc_id` and `session_id`)."""
    groups: dict[str, list[tuple[str, float]]] = {}
    for segment_id, score in ranked:
        row = row_of(segment_id)
        if row["kind"] == "chunk":
            key = f"doc:{row['doc_id']}"
        elif unit == "session" and row["session_id"] is not None:
            key = f"session:{row['doc_id']}/{row['session_id']}"
        else:
            key = segment_id
        groups.setdefault(key, []).append((segment_id, score))
    return list(groups.values())


def passage_groups(
    ranked: list[tuple[str, float]], row_of: Callable[[str], Mapping[str, Any]]
) -> list[list[tuple[str, float]]]:
    """`ranked` segments grouped by passage (`unit_groups` with unit "passage")."""
    return unit_groups(ranked, row_of, "passage")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _choose(
    snapshots: list[Snapshot], wanted: str | None, collection: str | None, workspace: Workspace
) -> Snapshot:
    if wanted is None:
        if not snapshots and collection:
            raise LookupError(f"no snapshot in collection {collection!r}; run `kgmem build` first")
        reader_collection(snapshots, collection, workspace.root)  # one collection, or named
        return snapshots[0]
    for snapshot in snapshots:
        if snapshot.snapshot_id == wanted:
            return snapshot
    known = ", ".join(s.snapshot_id for s in snapshots[:10]) or "none"
    raise LookupError(f"no snapshot {wanted!r} in {workspace.root} (known: {known})")
