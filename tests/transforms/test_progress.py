"""Progress files: totals and rows done add up across writers, and a chunked encoder
returns the same vectors while counting them."""

from __future__ import annotations

import multiprocessing

import numpy as np

from transforms.progress import (
    Counter,
    add_done,
    add_total,
    progress_encoder,
    read_progress,
    stage_progress_file,
    start_progress,
)


def _count(path, rows):
    counter = Counter(path)
    for _ in range(rows):
        counter.count()
    counter.flush()


def test_writers_in_several_processes_add_up(tmp_path):
    path = stage_progress_file(tmp_path / "stage")
    start_progress(path, 300, "rows")
    workers = [multiprocessing.Process(target=_count, args=(path, 100)) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    found = read_progress(path)
    assert (found.done, found.total, found.unit) == (300, 300, "rows")
    assert found.describe() == "300/300 rows"


def test_totals_grow_and_a_torn_line_is_ignored(tmp_path):
    path = tmp_path / "progress.log"
    assert read_progress(path) is None  # no file yet
    start_progress(path, 0, "texts embedded")
    assert read_progress(path) is None  # nothing announced yet
    add_total(path, 5)
    add_done(path, 2)
    add_total(path, 3)
    with path.open("a") as handle:
        handle.write("done 1")  # being written: no newline, still a whole number
        handle.write("\ndone x\n")
    found = read_progress(path)
    assert (found.done, found.total, found.unit) == (3, 8, "texts embedded")


def test_counting_without_a_file_is_a_no_op(tmp_path):
    missing = tmp_path / "elsewhere" / "progress.log"
    add_done(missing, 4)
    _count(missing, 3)
    assert not missing.exists()


def test_the_encoder_counts_texts_done_and_leaves_the_total_alone(tmp_path):
    path = tmp_path / "progress.log"
    start_progress(path, 10, "texts")

    def embed(texts):
        return np.array([[len(t), 1.0] for t in texts], np.float32).reshape(-1, 2)

    wrapped = progress_encoder(embed, path)
    texts = [f"text {i}" for i in range(4)]
    assert np.array_equal(wrapped(texts), embed(texts))
    assert wrapped([]).shape == (0, 2)
    found = read_progress(path)
    assert (found.done, found.total) == (4, 10)
