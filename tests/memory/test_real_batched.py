"""REAL's search as `real_beam` runs it — every root's beams a level at a time, what their
ends need read per level (`SearchSpace.prepare`, `Repairer.prepare`), candidates kept as
hops until they become beams and scored a level at once (`beam.HopSteps`) — finds, bit
for bit, what each root's own `beam_search` finds over the hop-per-edge expansion and
repair loops and each path scored whole with `np.mean` and `np.clip`
(`real_space_reference`); and each batched piece (link tables, edge filters,
co-occurring entities, evidence vectors, scores) equals its one-at-a-time form."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from memory.flat_prior import flat_prior
from memory.passage_links import passage_links, seed_nodes
from memory.real import links as links_module
from memory.real.anchors import anchor
from memory.real.beam import BeamParams, HopSteps, beam_search, beam_searches
from memory.real.evaluator import STATE, EmbeddingEvaluator
from memory.real.evidence import aggregate, rank_segments
from memory.real.intents import FACT, INTENTS, expected_answer_type
from memory.real.paths import Hop, Path, new_hop
from memory.real.repair import CO_OCCURRENCE, SPECULATION, SYMMETRY, TEMPLATES, Repairer
from memory.real.space import SearchSpace
from memory.snapshot_view import QueryContext
from tests.memory import real_space_reference as reference

QUESTIONS = [
    "Which city is Priya Natarajan's office in?",
    "Who is the CEO of Acme?",
    "Why did Priya move offices?",
    "Where does Sam Okafor live and why?",
]
MOMENTS = [datetime(2023, 6, 1, tzinfo=UTC), None]


def _setup(view, question, valid_at, speculative, untyped, templates, params):
    """The roots, space, repairer and evaluator of one `real_beam` search (`_search`)."""
    query = QueryContext(question, 5, valid_at, speculative)
    prior = flat_prior(view, query)
    links = passage_links(view) if untyped else None
    focus, seeded = None, []
    if links is not None:
        focus = np.zeros(links.n_segments, bool)
        focus[[view.segment_index[s] for s, _ in prior.fused]] = True
        seeded = seed_nodes(view, links, prior)[:5]
    space = SearchSpace.of(view, query, params.m, links, focus)
    roots = anchor(view, space.graph, question, prior.seed_entities(view), links, seeded)
    repairer = Repairer(space, templates)
    evaluator = EmbeddingEvaluator(space.query_vector, expected_answer_type(question))
    return [Path(a.entity, a.name, a.intent) for a in roots], space, repairer, evaluator


@pytest.mark.parametrize("question", QUESTIONS)
@pytest.mark.parametrize("valid_at", MOMENTS, ids=["before", "cutoff"])
@pytest.mark.parametrize(
    ("speculative", "untyped", "templates", "params"),
    [
        (False, True, TEMPLATES, BeamParams()),
        (True, True, (SPECULATION, CO_OCCURRENCE), BeamParams(k=3, m=3)),
        (False, False, TEMPLATES, BeamParams(max_depth=2)),
        (False, True, (SYMMETRY,), BeamParams(k=2, m=4, delta_qr=0.3)),
    ],
    ids=["defaults", "speculative", "typed", "narrow"],
)
def test_level_searches_find_what_each_root_finds_alone(
    graph_memory, question, valid_at, speculative, untyped, templates, params
) -> None:
    view = graph_memory._view
    args = (view, question, valid_at, speculative, untyped, templates, params)
    roots, space, repairer, evaluator = _setup(*args)

    def prepare(paths: list[Path]) -> None:
        space.prepare(paths, CO_OCCURRENCE in repairer.templates)
        repairer.prepare(paths)

    steps = HopSteps(space.expand_many, repairer.hops, evaluator.score_many, evaluator.adopt)
    batched = beam_searches(roots, space.expand, repairer, evaluator.score, params, prepare, steps)
    roots, space, repairer, evaluator = _setup(*args)
    query, expected = evaluator.query_vector, evaluator.expected_type
    alone = [
        beam_search(
            root,
            lambda path: reference.expand(space, path),
            lambda path: reference.repair(repairer, path),
            lambda paths: [reference.embedding_scores(query, expected, p) for p in paths],
            params,
        )
        for root in roots
    ]
    assert len(batched) == len(alone) > 0
    for ours, theirs in zip(batched, alone, strict=True):
        assert list(ours.final.items()) == list(theirs.final.items())
        assert ours.trace == theirs.trace
    final = {p: s for result in batched for p, s in result.final.items()}
    expected = {p: s for result in alone for p, s in result.final.items()}
    assert rank_segments(space.graph, aggregate(final), 50, space.links) == rank_segments(
        space.graph, aggregate(expected), 50, space.links
    )


def test_prepared_reads_equal_the_reads_end_by_end(graph_memory) -> None:
    """What `prepare` reads for several ends at once (edges and their filters, per-intent
    passing and rule edges, link tables, co-occurring entities and vectors, edge blocks)
    is what the ends read one by one give."""
    view = graph_memory._view
    query = QueryContext("Where does Sam Okafor live and why?", 5, None, False)
    links = passage_links(view)
    focus = np.zeros(links.n_segments, bool)
    focus[::3] = True
    n = SearchSpace.of(view, query, 5, links, focus).graph.n_entities
    others = [n + v for v in np.flatnonzero(links.node_entity < 0)[::5].tolist()]
    paths = [Path(e, "x", intent) for e in [*range(n), *others] for intent in INTENTS[:3]]
    # fresh memos on both sides: the view's caches are shared by its queries
    for key in [k for k in view.cache if str(k).startswith("real_")]:
        del view.cache[key]
    batched = SearchSpace.of(view, query, 5, links, focus)
    batched.prepare(paths, co_occurring=True)
    Repairer(batched).prepare(paths)
    for key in [k for k in view.cache if str(k).startswith("real_")]:
        del view.cache[key]
    alone = SearchSpace.of(view, query, 5, links, focus)
    repairer = Repairer(alone)
    for path in paths:
        end = path.end
        if end < n:
            ours, theirs = batched._edges.get(end), alone.edges_of(end)
            for name in ("facts", "others", "outgoing", "time_failed", "stability_failed"):
                assert np.array_equal(getattr(ours, name), getattr(theirs, name))
            assert np.array_equal(ours.labels, theirs.labels)
            assert np.array_equal(ours.taxonomic, theirs.taxonomic)
            passing = zip(ours.passing(path.intent), theirs.passing(path.intent), strict=True)
            for got, want in passing:
                assert np.array_equal(got, want)
            rules = Repairer(batched)._rule_edges(ours, path)
            for got, want in zip(rules, repairer._rule_edges(theirs, path), strict=True):
                assert np.array_equal(got, want)
            targets, vectors = batched.co_occurring(end)
            want_targets, want_vectors = alone.co_occurring(end)
            assert np.array_equal(targets, want_targets)
            assert np.array_equal(vectors, want_vectors) and vectors.dtype == want_vectors.dtype
            facts = ours.facts
            if len(facts) and batched.edge_vectors is not None:
                at = np.arange(len(facts))
                assert np.array_equal(batched.edge_rows(end, at), alone.edge_rows(end, at))
        node = alone.node_of(end)
        if node >= 0:
            ours, theirs = batched.link_table(node), alone.link_table(node)
            assert (ours.node_list, ours.row_starts) == (theirs.node_list, theirs.row_starts)
            assert (ours.via_list, ours.reached_list) == (theirs.via_list, theirs.reached_list)
        assert batched.expand_many([path]) == [alone.expand_hops(path)]


def test_link_tables_built_together_equal_each_alone(graph_memory) -> None:
    links = passage_links(graph_memory._view)
    focus = np.zeros(links.n_segments, bool)
    focus[1::2] = True
    nodes = np.flatnonzero(links.counts > 0).tolist()
    segments = [links_module.node_segments(links, v, focus) for v in nodes]
    together = links_module.link_tables(links, segments, nodes)
    assert len(together) == len(nodes)
    for node, own, table in zip(nodes, segments, together, strict=True):
        alone = links_module.link_table(links, own)
        assert (table.node_list, table.row_starts) == (alone.node_list, alone.row_starts)
        assert (table.via_list, table.reached_list) == (alone.via_list, alone.reached_list)
        assert table.chosen[node] == links_module._chosen(alone, node)


def test_expansions_of_a_level_equal_each_path_expanded(graph_memory) -> None:
    """`expand_many` (the untyped links' evidence vectors of several paths read at once)
    gives each path's `expand_hops`, hops and vectors equal, one hop further too."""
    view = graph_memory._view
    query = QueryContext("Which city is Priya Natarajan's office in?", 5, None, True)
    links = passage_links(view)
    space = SearchSpace.of(view, query, 4, links, np.ones(links.n_segments, bool))
    n = space.graph.n_entities
    starts = [Path(e, space.node_name(e), FACT) for e in range(0, n, 2)]
    paths = [*starts, *(p.extend(h) for p in starts[:20] for h in space.expand_hops(p)[:2])]
    together = space.expand_many(paths)
    for path, hops in zip(paths, together, strict=True):
        alone = space.expand_hops(path)
        assert hops == alone
        for ours, theirs in zip(hops, alone, strict=True):
            assert np.array_equal(ours.vector, theirs.vector)


def _random_hop(rng: np.random.Generator, i: int, dtype: type = np.float32) -> Hop:
    days = rng.integers(0, 4, size=2)
    start = datetime(2020 + int(days[0]), 1, 1, tzinfo=UTC) if rng.random() < 0.5 else None
    end = datetime(2021 + int(days[1]), 1, 1, tzinfo=UTC) if rng.random() < 0.5 else None
    vector = rng.normal(size=24).astype(dtype) if rng.random() < 0.95 else None
    return Hop(
        i, i, i + 1, "r", "x", f"t{i}", float(rng.uniform(0.3, 1.0)),
        target_type=["Location", "Person", None][int(rng.integers(0, 3))],
        valid_from=start, valid_to=end, vector=vector,
    )  # fmt: skip


def test_hops_scored_a_level_at_once_score_as_paths_one_at_a_time() -> None:
    """`score_many` (the hops of many parents in one pass, parents of any depth, without a
    vector sum, with hops of other dtypes or without vectors) gives every hop the scores
    `score_one` gives its path, bit for bit, and `adopt` leaves the state its children are
    scored from."""
    rng = np.random.default_rng(11)
    query = rng.normal(size=24).astype(np.float32)
    for _ in range(60):
        ours = EmbeddingEvaluator(query, "Location")
        parents = [Path(0, "root", FACT)]
        for depth in range(1, 4):
            parents += [
                Path(0, "root", FACT, tuple(_random_hop(rng, 10 * depth + j) for j in range(depth)))
                for _ in range(3)
            ]
        items = [
            (parent, [_random_hop(rng, 100 + k, np.float64 if k == 3 else np.float32)
                      for k in range(int(rng.integers(0, 6)))])
            for parent in parents
        ]  # fmt: skip
        scored = ours.score_many(items)
        for (parent, hops), results in zip(items, scored, strict=True):
            assert len(results) == len(hops)
            for hop, result in zip(hops, results, strict=True):
                child = parent.extend(hop)
                want = EmbeddingEvaluator(query, "Location").score_one(child)
                assert result[:3] == (want.relevance, want.coherence, want.sufficiency)
                assert ours.adopt(child, result) == want
                grandchild = child.extend(_random_hop(rng, 999))
                whole = Path(0, "root", FACT, grandchild.hops)
                assert ours.score_one(grandchild) == EmbeddingEvaluator(
                    query, "Location"
                ).score_one(whole)
                assert child.__dict__[STATE][0] is ours


def test_a_hop_with_its_text_pending_equals_the_hop_built_whole() -> None:
    vector = np.ones(3, np.float32)
    whole = Hop(1, 2, 3, "r", "n", "[a] -[r]-> [n]", 0.5, True, "T", vector=vector)
    pending = new_hop(
        1, 2, 3, "r", "n", None, 0.5, True, "T", None, None, None, (), vector,
        (lambda a, b: f"[{a}] -[r]-> [{b}]", "a", "n"),
    )  # fmt: skip
    assert "text" not in pending.__dict__
    assert pending == whole and hash(pending) == hash(whole)
    assert pending.text == whole.text and repr(pending) == repr(whole)
    assert Path(0, "a", FACT).extend(pending) == Path(0, "a", FACT, (whole,))
    with pytest.raises(AttributeError):
        _ = pending.missing
