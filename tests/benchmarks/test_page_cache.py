"""`benchmarks.page_cache.warm` reads every file under the folders given, once, whole."""

from __future__ import annotations

from pathlib import Path

from benchmarks import page_cache


def test_warm_reads_every_file_whole_and_skips_what_is_not_a_local_folder(
    tmp_path: Path, monkeypatch
) -> None:
    index, lance = tmp_path / "graph_index" / "snap", tmp_path / "lance"
    (lance / "t.lance" / "data").mkdir(parents=True)
    index.mkdir(parents=True)
    sizes = {
        index / "fact_vectors.npy": page_cache.CHUNK + 5,  # more than one read
        index / "empty.npy": 0,
        lance / "t.lance" / "data" / "part.lance": 1_000,
    }
    for path, size in sizes.items():
        path.write_bytes(b"x" * size)
    monkeypatch.setattr(page_cache, "CHUNK", 4_096)
    folders = [index, str(lance), tmp_path / "missing", "s3://bucket/lance"]
    assert page_cache.warm(folders) == sum(sizes.values())
    assert page_cache.warm([]) == 0
