"""`memory.nearest` over `transforms.vector_lists`: probing every list of the IVF index
finds exactly the rows the whole product finds, a default probe finds nearly all of them
on clustered vectors, and without an index (below `EXACT_BELOW` rows, or the option at 0)
the whole product is what runs."""

from __future__ import annotations

import numpy as np
import pytest

from memory import nearest
from memory.fact_columns import SelectedRows
from memory.nearest import PROBES, nearest_rows, probes_of
from memory.top import top_positions
from transforms.vector_lists import EXACT_BELOW, build_vector_lists, probe, unit_rows

RECALL_FLOOR = 0.9
"""Top-10 overlap with the whole product that a default probe must reach on the clustered
set below (measured: 0.99)."""


def _clustered(rows: int, seed: int = 7, dim: int = 48, clusters: int = 120) -> np.ndarray:
    """Unit rows around `clusters` random unit centres (noise comparable to the spread
    between near centres, so lists split neighbourhoods and a probe has work to do)."""
    rng = np.random.default_rng(seed)
    centres = unit_rows(rng.standard_normal((clusters, dim)))
    noise = rng.standard_normal((rows, dim)).astype(np.float32) * 0.12
    return unit_rows(centres[rng.integers(0, clusters, rows)] + noise)


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    return _clustered(20_000)


@pytest.fixture(scope="module")
def lists(vectors):
    built = build_vector_lists(vectors, exact_below=1)
    assert built is not None
    return built


@pytest.fixture(scope="module")
def questions(vectors) -> np.ndarray:
    rng = np.random.default_rng(3)
    near = vectors[rng.integers(0, len(vectors), 40)]
    return unit_rows(near + rng.standard_normal(near.shape).astype(np.float32) * 0.1)


def test_lists_partition_the_rows_in_a_grouped_copy(vectors, lists) -> None:
    assert lists.n_lists == round(np.sqrt(len(vectors)))
    assert np.array_equal(np.sort(lists.order), np.arange(len(vectors)))
    assert lists.offsets[0] == 0 and lists.offsets[-1] == len(vectors)
    assert np.all(np.diff(lists.offsets) >= 0)
    assert np.array_equal(lists.vectors, vectors[lists.order])


def test_the_build_is_deterministic(vectors, lists) -> None:
    again = build_vector_lists(vectors, exact_below=1)
    assert again is not None
    for part in ("centroids", "offsets", "order", "vectors"):
        assert np.array_equal(getattr(again, part), getattr(lists, part)), part


def test_probing_every_list_is_the_whole_product(vectors, lists, questions) -> None:
    for question in questions:
        exact, exact_scores = nearest_rows(vectors, question, 10, None, PROBES)
        probed, scores = nearest_rows(vectors, question, 10, lists, lists.n_lists)
        assert probed.tolist() == exact.tolist()
        np.testing.assert_allclose(scores, exact_scores, rtol=0, atol=1e-6)
        assert exact.tolist() == top_positions(vectors @ question, 10).tolist()


def test_probing_every_list_of_a_selection_is_the_selections_product(
    vectors, lists, questions
) -> None:
    """Positions come back within the selection, the rows it leaves out never."""
    chosen = np.flatnonzero(np.random.default_rng(5).random(len(vectors)) < 0.3)
    selected = SelectedRows(vectors, chosen)
    for question in questions[:10]:
        exact, _ = nearest_rows(selected, question, 5, None, 0)
        probed, _ = nearest_rows(selected, question, 5, lists, lists.n_lists)
        assert probed.tolist() == exact.tolist()
        few, _ = nearest_rows(selected, question, 5, lists, 1)
        assert len(few) == 5, "a probe too narrow for the selection widens"


def test_a_partial_probe_of_a_selection_keeps_the_selected_rows_it_reads(
    vectors, lists, questions
) -> None:
    """The selection's inverse lookup (`SelectedRows.within`) against a binary search of
    its positions, on the rows a probe of a few lists reads."""
    chosen = np.flatnonzero(np.random.default_rng(11).random(len(vectors)) < 0.4)
    selected = SelectedRows(vectors, chosen)
    for question in questions[:10]:
        rows, scores = probe(lists, question, 4)
        at = np.minimum(np.searchsorted(chosen, rows), len(chosen) - 1)
        kept = chosen[at] == rows
        assert selected.within(rows).tolist() == np.where(kept, at, -1).tolist()
        found, found_scores = nearest_rows(selected, question, 7, lists, 4)
        order = np.lexsort((at[kept], -scores[kept]))[:7]
        assert found.tolist() == at[kept][order].tolist()
        assert np.array_equal(found_scores, scores[kept][order])


def test_a_default_probe_finds_nearly_all_the_nearest_rows(vectors, lists, questions) -> None:
    overlap = []
    for question in questions:
        exact, _ = nearest_rows(vectors, question, 10, None, 0)
        probed, _ = nearest_rows(vectors, question, 10, lists, PROBES)
        overlap.append(len(set(exact.tolist()) & set(probed.tolist())) / 10)
    assert np.mean(overlap) >= RECALL_FLOOR
    rows, _ = probe(lists, questions[0], PROBES)
    assert len(rows) < len(vectors) / 2, "a default probe reads a part of the rows"


def test_below_the_threshold_no_index_is_built_and_the_product_runs() -> None:
    small = _clustered(EXACT_BELOW - 1, dim=8, clusters=10)
    assert build_vector_lists(small) is None
    assert build_vector_lists(np.zeros((EXACT_BELOW, 0), np.float32)) is None
    question = small[0]
    top, scores = nearest_rows(small, question, 3, None, PROBES)
    assert top.tolist() == top_positions(small @ question, 3).tolist()
    assert np.array_equal(scores, (small @ question)[top])


def test_the_option_sets_the_probes() -> None:
    assert probes_of({}) == PROBES
    assert probes_of({"vector_probes": 0}) == 0


def test_a_search_asked_again_is_kept_and_answers_the_same(
    vectors, lists, questions, monkeypatch
) -> None:
    """The same search (matrix, lists, probes, query vector) asked again reads no list
    again and gives the same rows, also for a count it was not first asked with and for
    another `np.asarray` view of the same matrix; another query vector, matrix or number
    of probes is searched anew."""
    calls: list[int] = []

    def counted(*args: object) -> tuple[np.ndarray, np.ndarray]:
        calls.append(1)
        return probe(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(nearest, "probe", counted)
    question = questions[0]
    first = nearest_rows(vectors, question, 3, lists, 4)
    assert len(calls) == 1
    again = nearest_rows(np.asarray(vectors), question.copy(), 7, lists, 4)
    assert len(calls) == 1
    assert np.array_equal(again[0][:3], first[0]) and np.array_equal(again[1][:3], first[1])
    nearest_rows(vectors, questions[1], 3, lists, 4)
    nearest_rows(vectors, question, 3, lists, 8)
    nearest_rows(vectors.copy(), question, 3, lists, 4)
    assert len(calls) == 4
    exact = nearest_rows(vectors, question, 5, None, 0)
    assert np.array_equal(exact[0], top_positions(vectors @ question, 5))
    assert np.array_equal(nearest_rows(vectors, question, 5, None, 0)[0], exact[0])
