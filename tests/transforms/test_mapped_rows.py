"""`transforms.mapped_rows`: rows and spans of a memory-mapped matrix are the rows the
mapping gives (any order, repeats, views and offsets); spans are read from the file and
leave nothing mapped, gathered pages are handed back past the budget, rows read from the
file map and count nothing; an IVF probe over a mapped index scores exactly as over the
arrays in memory and as each list multiplied through the mapping."""

from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np
import pytest

from memory.fact_columns import SelectedRows, StackedRows
from transforms import mapped_rows
from transforms.mapped_rows import read_rows, read_rows_from_file, span_products
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
    for rows in _row_sets(rng):
        for read in (read_rows(mapping, rows), read_rows_from_file(mapping, rows)):
            assert type(read) is np.ndarray
            np.testing.assert_array_equal(read, matrix[rows])


def _row_sets(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Row selections of every shape a reader asks for, in the fixture's 3,000 rows."""
    return (
        rng.integers(0, 3_000, 500),  # any order, with repeats
        np.arange(100, 900),  # one run
        np.array([0, 1, 2, 2999, 2998, 5, 5, 5]),
        np.array([-1, -3000]),  # negative positions as numpy reads them
        np.array([1234]),  # one row
        np.array([-2]),
        np.zeros(0, np.int64),
        np.sort(rng.choice(3_000, 400, replace=False)),  # ascending, some runs
    )


def test_a_view_of_the_mapping_reads_its_own_rows(mapped) -> None:
    matrix, mapping = mapped
    view = np.asarray(mapping)[700:1200]  # plain array over the map, offset rows
    np.testing.assert_array_equal(read_rows(view, [0, 499, 3]), matrix[700:1200][[0, 499, 3]])
    for rows in ([0, 499, 3], [-1, 2, 3, 4], [499]):
        np.testing.assert_array_equal(read_rows_from_file(view, rows), matrix[700:1200][rows])
    vector = np.linspace(-1, 1, matrix.shape[1], dtype=np.float32)
    products = span_products(view, np.array([10, 0, 400]), np.array([20, 0, 500]), vector)
    assert products.dtype == np.float32
    np.testing.assert_array_equal(
        products, np.concatenate([matrix[710:720] @ vector, matrix[1100:1200] @ vector])
    )
    for outside in ([500], [3, 500], [-501]):
        with pytest.raises(IndexError):
            read_rows(view, outside)
        with pytest.raises(IndexError):
            read_rows_from_file(view, outside)


def test_arrays_in_memory_are_indexed_as_before(mapped) -> None:
    matrix, _ = mapped
    np.testing.assert_array_equal(read_rows(matrix, [4, 2]), matrix[[4, 2]])
    np.testing.assert_array_equal(read_rows(matrix[:, :3], [4, 2]), matrix[[4, 2], :3])
    np.testing.assert_array_equal(read_rows_from_file(matrix, [4, 2, 4]), matrix[[4, 2, 4]])
    np.testing.assert_array_equal(read_rows_from_file(matrix[:, :3], [4]), matrix[[4], :3])
    vector = np.ones(matrix.shape[1], np.float32)
    products = span_products(matrix, np.array([1, 5]), np.array([3, 6]), vector)
    np.testing.assert_array_equal(products, np.r_[matrix[1:3] @ vector, matrix[5:6] @ vector])


def test_spans_and_rows_from_the_file_leave_nothing_mapped(mapped, monkeypatch) -> None:
    """The products are the rows' (bit for bit), and no page of the spans is mapped,
    spans whose edges are not page boundaries too, nor of rows read from the file (which
    count nothing against the budget); a gather through the mapping stays."""
    matrix, mapping = mapped
    vector = np.random.default_rng(8).standard_normal(matrix.shape[1]).astype(np.float32)
    starts, ends = np.array([0, 1_111, 2_000]), np.array([1_000, 1_500, 3_000])
    # the file is opened (and two of its pages compared through the mapping) once
    assert mapped_rows._file(mapped_rows._root(mapping)) is not None
    mapping._mmap.madvise(mmap.MADV_DONTNEED)
    products = span_products(mapping, starts, ends, vector)
    expected = [matrix[s:e] @ vector for s, e in zip(starts, ends, strict=True)]
    np.testing.assert_array_equal(products, np.concatenate(expected))
    assert _resident_kib(mapping.filename) == 0
    monkeypatch.setattr(mapped_rows, "_touched_windows", 0)
    rows = np.arange(0, len(matrix), 7)
    np.testing.assert_array_equal(read_rows_from_file(mapping, rows), matrix[rows])
    assert _resident_kib(mapping.filename) == 0
    assert mapped_rows._touched_windows == 0
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
    rows = np.array([9, 0, 9, 998, 10, 11])
    np.testing.assert_array_equal(selected.from_file(rows), matrix[positions[rows]])


@pytest.mark.parametrize("change", ["removed", "replaced"])
def test_a_file_gone_or_replaced_is_read_through_the_mapping(tmp_path: Path, change) -> None:
    """Rows and spans are the mapped bytes even when the file under the mapping was
    removed or replaced (by other rows of the same size) before the first read."""
    matrix = np.random.default_rng(6).standard_normal((2_000, 24)).astype(np.float32)
    np.save(tmp_path / "m.npy", matrix)
    mapping = np.load(tmp_path / "m.npy", mmap_mode="r")
    (tmp_path / "m.npy").unlink()
    if change == "replaced":
        np.save(tmp_path / "m.npy", matrix[::-1].copy())
    rows = np.array([5, 1_999, 5, 0])
    np.testing.assert_array_equal(read_rows_from_file(mapping, rows), matrix[rows])
    vector = np.ones(24, np.float32)
    products = span_products(mapping, np.array([0, 1_500]), np.array([10, 2_000]), vector)
    np.testing.assert_array_equal(products, np.r_[matrix[:10] @ vector, matrix[1_500:] @ vector])
    assert mapped_rows._file(mapped_rows._root(mapping)) is None


def test_spans_longer_than_the_buffer_grow_it(mapped) -> None:
    """The reused buffer of `span_products` grows for a longer span; shorter spans after
    it read only their own rows."""
    matrix, mapping = mapped
    vector = np.random.default_rng(9).standard_normal(matrix.shape[1]).astype(np.float32)
    for starts, ends in (([0], [10]), ([5, 100], [2_900, 103]), ([7], [8])):
        products = span_products(mapping, np.array(starts), np.array(ends), vector)
        expected = [matrix[s:e] @ vector for s, e in zip(starts, ends, strict=True)]
        np.testing.assert_array_equal(products, np.concatenate(expected))


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


@pytest.mark.parametrize("order", ["ascending", "any"])
def test_stacked_rows_multiply_row_by_row(mapped, order: str) -> None:
    """Blocks of a mapping's selection, an array and an empty block multiply as their
    concatenation, for ascending rows (read block by block as runs) and rows in any
    order with repeats: each product is the `einsum` of that row alone."""
    matrix, mapping = mapped
    positions = np.arange(1, len(matrix), 2)
    blocks = [SelectedRows(mapping, positions).unbounded(), matrix[:40], matrix[:0], matrix[40:90]]
    whole = np.concatenate([matrix[positions], matrix[:40], matrix[40:90]])
    stacked = StackedRows(blocks)
    rng = np.random.default_rng(3)
    rows = rng.integers(0, len(whole), 500)
    rows = np.sort(rows) if order == "ascending" else rows
    vector = rng.standard_normal(matrix.shape[1]).astype(np.float32)
    expected = np.array([np.einsum("j,j->", whole[r], vector) for r in rows], np.float32)
    np.testing.assert_array_equal(stacked.row_products(rows, vector), expected)
    assert stacked.row_products(rows[:0], vector).shape == (0,)


def test_spans_multiplied_row_by_row_are_each_rows_own_product(mapped) -> None:
    """With `each_row`, a span's products are each row's `einsum` alone, bit for bit,
    whether the rows are read from the file, indexed in memory or gathered in any batch."""
    matrix, mapping = mapped
    vector = np.random.default_rng(10).standard_normal(matrix.shape[1]).astype(np.float32)
    starts, ends = np.array([3, 0, 1_000, 2_990]), np.array([700, 0, 1_001, 3_000])
    rows = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends, strict=True)])
    alone = np.array([np.einsum("ij,j->i", matrix[[row]], vector)[0] for row in rows])
    for source in (mapping, matrix):
        products = span_products(source, starts, ends, vector, each_row=True)
        assert products.dtype == np.float32
        assert np.array_equal(products, alone)
    assert np.array_equal(np.einsum("ij,j->i", matrix[rows[::-1]], vector), alone[::-1])
