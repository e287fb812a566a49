"""The R-GCN weights a build keeps for the next one: saved atomically, read back whole, and
an unreadable file means a cold start, not a failed build."""

from __future__ import annotations

import numpy as np

from stores.structure_table import load_trained, save_trained
from transforms.structural_bank import TrainedModel


def test_round_trip(tmp_path) -> None:
    model = TrainedModel(
        {"layers.0.self_loop.weight": np.eye(3, dtype=np.float32)},
        ["born_in", "works_at"],
        "abc",
        np.array([3, 9], np.uint64),
        0.04,
    )
    path = tmp_path / "models" / "rgcn" / "c.npz"
    save_trained(path, model)
    read = load_trained(path)
    assert read is not None
    assert read.relations == model.relations and read.config_digest == "abc" and read.drift == 0.04
    assert np.array_equal(read.triple_keys, model.triple_keys)
    assert np.array_equal(read.state["layers.0.self_loop.weight"], np.eye(3))
    assert [p.name for p in path.parent.iterdir()] == ["c.npz"], "no staging file left"


def test_missing_or_corrupt_files_read_as_none(tmp_path) -> None:
    assert load_trained(tmp_path / "absent.npz") is None
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    assert load_trained(tmp_path / "bad.npz") is None
    (tmp_path / "cut.npz").write_bytes(b"PK\x03\x04 truncated")
    assert load_trained(tmp_path / "cut.npz") is None
