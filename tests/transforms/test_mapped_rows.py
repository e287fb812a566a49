"""`transforms.mapped_rows`: rows and spans of a memory-mapped matrix are the rows the
mapping gives (any order, repeats, views and offsets); spans are multiplied through the
mapping and handed back at once, gathered pages are handed back past the budget; an IVF
probe over a mapped index scores exactly as over the arrays in memory."""

from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np
import pytest

from memory.fact_columns import SelectedRows
from transforms import mapped_rows
from transforms.mapped_rows import read_rows, span_products
from transforms.vector_lists import VectorLists, build_vector_lists, probe, unit_rows


@pytest.fixture()
def mapped(tmp_path: Path) -> tuple[np.ndarray, np.ndarray]:
    """(matrix in memory, the same matrix saved and mapped by `np.load`)."""
    matrix = np.random.default_rng(5).standard_normal((3_000, 24)).astype(np.float32)
    np.save(tmp_path / "m.npy", matrix)
    return matrix, np.load(tmp_path / "m.npy", mmap_mode="r")


def test_rows_read_from_the_file_are_the_mapped_rows(mapped) -> None:
    matrix, mapping = mapped
    rng = np.random.default_rng(1)
    for rows in (
        rng.integers(0, len(matrix), 500),  # any order, with repeats
        np.arange(100, 900),  # one run
        np.array([0, 1, 2, 2999, 2998, 5, 5, 5]),
        np.array([-1, -3000]),  # negative positions as numpy reads them
        np.array([1234]),  # one row
        np.array([-2]),
        np.zeros(0, np.int64),
    ):
        read = read_rows(mapping, rows)
        assert type(read) is np.ndarray
        np.testing.assert_array_equal(read, matrix[rows])


def test_a_view_of_the_mapping_reads_its_own_rows(mapped) -> None:
    matrix, mapping = mapped
    view = np.asarray(mapping)[700:1200]  # plain array over the map, offset rows
    np.testing.assert_array_equal(read_rows(view, [0, 499, 3]), matrix[700:1200][[0, 499, 3]])
    vector = np.linspace(-1, 1, matrix.shape[1], dtype=np.float32)
    products = span_products(view, np.array([10, 0, 400]), np.array([20, 0, 500]), vector)
    assert products.dtype == np.float32
    np.testing.assert_array_equal(
        products, np.concatenate([matrix[710:720] @ vector, matrix[1100:1200] @ vector])
    )
    for outside in ([500], [3, 500], [-501]):
        with pytest.raises(IndexError):
            read_rows(view, outside)


def test_arrays_in_memory_are_indexed_as_before(mapped) -> None:
    matrix, _ = mapped
    np.testing.assert_array_equal(read_rows(matrix, [4, 2]), matrix[[4, 2]])
    np.testing.assert_array_equal(read_rows(matrix[:, :3], [4, 2]), matrix[[4, 2], :3])
    vector = np.ones(matrix.shape[1], np.float32)
    products = span_products(matrix, np.array([1, 5]), np.array([3, 6]), vector)
    np.testing.assert_array_equal(products, np.r_[matrix[1:3] @ vector, matrix[5:6] @ vector])


def test_spans_are_multiplied_and_handed_back(mapped) -> None:
    """The products are the rows' (bit for bit), and no page of the spans stays mapped,
    spans whose edges are not page boundaries too; a gather through the mapping stays."""
    matrix, mapping = mapped
    vector = np.random.default_rng(8).standard_normal(matrix.shape[1]).astype(np.float32)
    starts, ends = np.array([0, 1_111, 2_000]), np.array([1_000, 1_500, 3_000])
    products = span_products(mapping, starts, ends, vector)
    expected = [matrix[s:e] @ vector for s, e in zip(starts, ends, strict=True)]
    np.testing.assert_array_equal(products, np.concatenate(expected))
    assert _resident_kib(mapping.filename) == 0
    np.asarray(mapping[np.arange(0, len(matrix), 7)])  # through the mapping: resident
    assert _resident_kib(mapping.filename) > 0


def test_gathered_pages_are_handed_back_past_the_budget(mapped, monkeypatch) -> None:
    """Rows gathered through the mapping stay mapped until the windows they touched exceed
    the budget; then the mapping is handed back, and reads give the same rows after."""
    matrix, mapping = mapped  # 3,000 rows of 96 bytes: 288 KB, five 64 KB windows
    monkeypatch.setattr(mapped_rows, "RESIDENT_BUDGET", 3 * mapped_rows.WINDOW)
    monkeypatch.setattr(mapped_rows, "_touched_windows", 0)  # earlier tests' gathers
    np.testing.assert_array_equal(read_rows(mapping, [0, 1]), matrix[[0, 1]])
    resident = _resident_kib(mapping.filename)
    assert resident > 0
    np.testing.assert_array_equal(read_rows(mapping, [700]), matrix[[700]])  # 2 windows
    assert _resident_kib(mapping.filename) >= resident
    np.testing.assert_array_equal(read_rows(mapping, [2_999, 1_400]), matrix[[2_999, 1_400]])
    assert _resident_kib(mapping.filename) == 0  # 4 windows: handed back
    np.testing.assert_array_equal(read_rows(mapping, [5, 2_998]), matrix[[5, 2_998]])


def test_selected_rows_of_a_mapping_read_the_same_rows(mapped) -> None:
    matrix, mapping = mapped
    positions = np.arange(3, len(matrix), 3)
    selected = SelectedRows(mapping, positions)
    np.testing.assert_array_equal(selected[7], matrix[positions[7]])
    np.testing.assert_array_equal(selected[[5, 1, 5]], matrix[positions[[5, 1, 5]]])
    np.testing.assert_array_equal(selected.take(np.array([9, 0])), matrix[positions[[9, 0]]])


def test_a_probe_of_a_mapped_index_scores_as_in_memory(tmp_path: Path) -> None:
    vectors = unit_rows(np.random.default_rng(2).standard_normal((4_000, 32)))
    lists = build_vector_lists(vectors, exact_below=1)
    assert lists is not None
    parts = {}
    for name in ("centroids", "offsets", "order", "vectors"):
        np.save(tmp_path / f"{name}.npy", getattr(lists, name))
        parts[name] = np.load(tmp_path / f"{name}.npy", mmap_mode="r")
    on_disk = VectorLists(**parts)
    for query in unit_rows(np.random.default_rng(4).standard_normal((10, 32))):
        for probes in (1, 8, lists.n_lists):
            positions, scores = probe(on_disk, query, probes)
            expected_positions, expected_scores = probe(lists, query, probes)
            np.testing.assert_array_equal(positions, expected_positions)
            np.testing.assert_array_equal(scores, expected_scores)
            # each list multiplied through the mapping, as the probe does
            by_mapping = [
                np.asarray(on_disk.vectors[s:e] @ query, np.float32)
                for s, e in zip(on_disk.offsets[:-1], on_disk.offsets[1:], strict=True)
                if set(on_disk.order[s:e].tolist()) <= set(positions.tolist()) and e > s
            ]
            np.testing.assert_array_equal(scores, np.concatenate(by_mapping))


def _resident_kib(path: str | Path) -> int:
    """Resident KiB of this process's mappings of `path` (/proc/self/smaps)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and not fields[0].endswith(":"):
            inside = fields[-1] == str(path)
        elif inside and fields[0] == "Rss:":
            total += int(fields[1])
    return total


def test_unbounded_selected_rows_read_alike_and_count_nothing(mapped, monkeypatch) -> None:
    """PersonalAI's hyperedge vectors: the same rows, never counted against the budget."""
    matrix, mapping = mapped
    positions = np.arange(3, len(matrix), 3)
    unbounded = SelectedRows(mapping, positions).unbounded()
    monkeypatch.setattr(mapped_rows, "_touched_windows", 0)
    np.testing.assert_array_equal(unbounded[7], matrix[positions[7]])
    np.testing.assert_array_equal(unbounded[[5, 1, 5]], matrix[positions[[5, 1, 5]]])
    np.testing.assert_array_equal(unbounded.take(np.array([9, 0])), matrix[positions[[9, 0]]])
    assert mapped_rows._touched_windows == 0
    assert unbounded.positions is positions and len(unbounded) == len(positions)


def test_populate_maps_a_whole_mapping_and_leaves_arrays_in_memory_alone(mapped) -> None:
    """`populate` maps every page of a mapped matrix at once (where the kernel has the
    advice; else it says it did not), values unchanged; an array in memory is left as is."""
    matrix, mapping = mapped
    assert not mapped_rows.populate(matrix)
    mapping._mmap.madvise(mmap.MADV_DONTNEED)
    assert _resident_kib(mapping.filename) == 0
    if mapped_rows.populate(mapping):
        assert _resident_kib(mapping.filename) * 1024 >= matrix.nbytes
    np.testing.assert_array_equal(np.asarray(mapping), matrix)
