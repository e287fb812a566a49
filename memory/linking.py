"""Linking a query to the memory: the entities it names, and the entities, facts and
segments most similar to it. Every graph strategy seeds from these.

Exact naming (any alias as a normalised n-gram of the query) is weighted 1, and so is a
query n-gram equal to a phrase node's key (`phrase_keys`); similarity
links carry their cosine and are kept only at or above `MIN_SIMILARITY`, so an unrelated
query seeds nothing rather than the nearest noise.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
from lancedb.query import LanceQueryBuilder

from memory.graph import MemoryGraph, graph_of
from memory.nearest import PROBES, nearest_rows, probes_of
from memory.snapshot_view import QueryContext, SnapshotView
from schemas.tables import VECTOR, VECTOR_FUSION
from transforms.consolidation import normalize_name

MAX_NGRAM = 5
PHRASE_WORDS = 4
"""Longest phrase key tried (`transforms.phrases.MAX_WORDS`)."""
MIN_SIMILARITY = 0.5

_WORD = re.compile(r"[\w'’-]+")

_SEARCHES = ThreadPoolExecutor(max_workers=4, thread_name_prefix="kgmem-search")
"""Runs LanceDB searches beside the caller's own work (`beside`)."""


def beside(search: Callable[..., Any], *args: Any) -> Future:
    """`search(*args)` started on a worker thread, for a search that needs nothing the
    caller is computing: LanceDB's synchronous calls wait on its own runtime and numpy's
    products release the interpreter, so a full-text search overlaps the query's encoding
    and a vector search. The worker must not fill the view's caches that the caller fills
    (the query vector): pass what it needs."""
    return _SEARCHES.submit(search, *args)


def named_entities(view: SnapshotView, text: str) -> dict[str, float]:
    """Entities named in `text` (any alias, as a normalised n-gram), weight 1."""
    words = _WORD.findall(text)
    found: dict[str, float] = {}
    for size in range(min(MAX_NGRAM, len(words)), 0, -1):
        for start in range(len(words) - size + 1):
            entity = view.alias_index.get(normalize_name(" ".join(words[start : start + size])))
            if entity:
                found[entity] = 1.0
    return found


def phrase_keys(text: str, max_words: int = PHRASE_WORDS) -> set[str]:
    """Candidate phrase-node keys of a query (`transforms.phrases`, whose keys are
    lower-cased lemmas): every lower-cased n-gram of up to `max_words` words, each also with
    its last word singular by rule ("clubs" -> "club", "stories" -> "story"). The query is
    not tagged, so that linking needs no spaCy model at query time; an n-gram that is no
    phrase simply names no node."""
    words = [w.lower() for w in _WORD.findall(text)]
    keys: set[str] = set()
    for size in range(1, min(max_words, len(words)) + 1):
        for start in range(len(words) - size + 1):
            gram = words[start : start + size]
            keys.add(" ".join(gram))
            keys.add(" ".join([*gram[:-1], _singular(gram[-1])]))
    return keys


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def similar_entities(
    view: SnapshotView,
    text: str,
    k: int,
    min_similarity: float = MIN_SIMILARITY,
    probes: int = PROBES,
) -> dict[str, float]:
    """The `k` entities whose description embedding is closest to `text` (entity id ->
    cosine, 4 decimals, best first), those below `min_similarity` left out.

    Searched in the graph index's unit entity vectors (`similar_entity_positions`), not in
    LanceDB's entities table: without a vector index (below 250k rows) LanceDB scans the
    table's files, 49 ms of PersonalAI's 121 ms a query over the 25k entities of the
    100k-fact benchmark, where the mapped product takes ~1.7-2.3 ms. Both are the same
    cosine (the stored vectors are unit length, and LanceDB's 1 - L2²/2 is their cosine),
    so the entities are the same but for near-ties at the fourth decimal; above 50k
    entities the index's IVF lists are probed (`probes` lists, as every other entity
    search), where LanceDB's own index was approximate too."""
    found = similar_entity_positions(view, view.embed_query(text), k, probes)
    ids = view.node_names.entity_ids
    return {ids[e]: s for e, s in found.items() if s >= min_similarity}


def similar_entity_positions(
    view: SnapshotView, vector: np.ndarray, k: int, probes: int
) -> dict[int, float]:
    """The `k` entities whose description embedding is closest to the query `vector`, as
    graph positions (the order of `view.entities`) with their cosine (4 decimals), best
    first: the product with the graph index's unit entity vectors, over the lists of its
    IVF index nearest to the query where it has one (`memory.nearest`, `probes` lists).

    LanceDB's search of the entities table, without LanceDB: that table has no vector
    index below 250k rows, and its flat search took 55 ms a query at 25k entities (the
    100k-fact benchmark) where the product takes ~1 ms; at 250k the probe reads ~8k rows
    (~3 ms against LanceDB's 5 ms)."""
    vectors = view.entity_unit_vectors
    if not len(vectors):
        return {}
    top, closeness = nearest_rows(vectors, vector, k, view.graph_index.entity_lists, probes)
    return {int(e): round(float(c), 4) for e, c in zip(top, closeness, strict=True)}


def similar_segments(
    view: SnapshotView, text: str, k: int, second_encoder: bool = False
) -> list[tuple[str, float]]:
    """Top-k retrievable (segment id, cosine) under the snapshot's encoder, or under its
    second (fusion) encoder; vectors are normalised, so cosine = 1 - L2²/2."""
    model = view.fusion_encoder if second_encoder else None
    if second_encoder and model is None:
        raise LookupError(f"snapshot {view.snapshot.snapshot_id} holds no second-encoder vectors")
    column = VECTOR_FUSION if model else VECTOR
    return nearest_segments(view, view.embed_query(text, model), k, column)


def nearest_segments(
    view: SnapshotView, vector: np.ndarray, k: int, column: str = VECTOR
) -> list[tuple[str, float]]:
    """`similar_segments` of a query vector already encoded: exact from the graph index
    where the segments table has no vector index (`memory.exact_segments`), else
    LanceDB's search."""
    exact = view.exact_segments if column == VECTOR else None
    if exact is not None:
        return exact.nearest(vector, k)
    search = view.table("segments").search(vector, vector_column_name=column)
    hits = _retrievable(view, search).select(["segment_id", "_distance"]).limit(k).to_arrow()
    return [
        (segment, round(1.0 - distance / 2.0, 6))
        for segment, distance in zip(
            hits.column("segment_id").to_pylist(), hits.column("_distance").to_pylist(), strict=True
        )
    ]


def full_text_segments(view: SnapshotView, text: str, k: int) -> list[tuple[str, float]]:
    """Top-k retrievable (segment id, BM25 score) from the segments' postings in the
    graph index (`memory.lexical_search`), or LanceDB's full-text index where the
    snapshot's graph index has none."""
    lexical = view.lexical_search
    if lexical is not None:
        return lexical.top(text, k)
    search = view.table("segments").search(text, query_type="fts")
    hits = _retrievable(view, search).select(["segment_id", "_score"]).limit(k).to_arrow()
    return [
        (segment, round(score, 6))
        for segment, score in zip(
            hits.column("segment_id").to_pylist(), hits.column("_score").to_pylist(), strict=True
        )
    ]


def _retrievable(view: SnapshotView, search: LanceQueryBuilder) -> LanceQueryBuilder:
    """`search` restricted to retrievable segments, where the snapshot has others."""
    where = view.retrievable_filter
    return search.where(where, prefilter=True) if where else search


def similar_facts(
    view: SnapshotView, query: QueryContext, k: int, vector: np.ndarray | None = None
) -> list[tuple[int, float]]:
    """Top-k of the query's facts by cosine of their statement to the query text, as
    (index into `graph_of(view, query).facts`, cosine), best first: over every fact, or
    over the nearest lists of the index's IVF index where it has one (`memory.nearest`,
    option `vector_probes`). `vector`: the query's vector when already encoded (a search
    run `beside` must not fill the view's cache of it)."""
    graph = graph_of(view, query)
    if not graph.facts:
        return []
    top, similarity = nearest_rows(
        graph.fact_vectors,
        view.embed_query(query.text) if vector is None else vector,
        k,
        view.graph_index.fact_lists,
        probes_of(query.options),
    )
    return [(int(i), round(float(s), 4)) for i, s in zip(top, similarity, strict=True)]


def fact_linked_entities(view: SnapshotView, query: QueryContext, k: int) -> dict[str, float]:
    """HippoRAG 2's query-to-triple linking: the ends of the `k` facts most similar to the
    query, weighted by that similarity."""
    graph = graph_of(view, query)
    linked: dict[str, float] = {}
    for index, score in similar_facts(view, query, k):
        for end in (graph.fact_head[index], graph.fact_tail[index]):
            entity = graph.entity_ids[end]
            linked[entity] = max(linked.get(entity, 0.0), score)
    return {e: s for e, s in linked.items() if s >= MIN_SIMILARITY}


def query_entities(
    view: SnapshotView, query: QueryContext, similar: int = 3, via_facts: int = 5
) -> dict[str, float]:
    """Named, description-similar and fact-linked entities, each with its best weight."""
    seeds: dict[str, float] = {}
    for found in (
        similar_entities(view, query.text, similar, probes=probes_of(query.options))
        if similar
        else {},
        fact_linked_entities(view, query, via_facts) if via_facts else {},
        named_entities(view, query.text),
    ):
        for entity, weight in found.items():
            seeds[entity] = max(seeds.get(entity, 0.0), weight)
    return seeds


def positions(graph: MemoryGraph, entities: dict[str, float]) -> dict[int, float]:
    """Entity ids with weights -> graph node positions with weights (unknown ids dropped)."""
    return {graph.entity_position[e]: w for e, w in entities.items() if e in graph.entity_position}
