"""The R-GCN weights a build keeps for the next one: saved atomically, read back whole, an
unreadable file means a cold start, not a failed build; and the structural bank's sync
trains cold, then warm on a small change, then cold once the drift passes the bound."""

from __future__ import annotations

import lancedb
import numpy as np

from stores.structure_table import WarmStartSettings, load_trained, save_trained, sync_structure
from tests.transforms.test_rgcn import N, _ring, _text
from transforms.rgcn import RGCNConfig
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


def _ring_graph() -> tuple[list[str], list[dict[str, str]]]:
    """The entity ids and fact rows of `_ring`'s test graph."""
    ids = [f"e{i}" for i in range(N)]
    facts = [
        {"head_entity_id": f"e{h}", "relation": f"r{r}", "tail_entity_id": f"e{t}"}
        for h, r, t in zip(*_ring(), strict=True)
    ]
    return ids, facts


def test_sync_trains_cold_then_warm_then_cold_past_the_bound(tmp_path) -> None:
    db = lancedb.connect(tmp_path / "lance")
    ids, facts = _ring_graph()
    warm = WarmStartSettings(tmp_path / "models" / "rgcn" / "c.npz", staleness=0.05, epochs=4)
    config = RGCNConfig(dim=16, epochs=20)

    first = sync_structure(db, "c__structure", ids, _text(), facts, config, warm)
    assert first.bank is not None and not first.bank.result.warm_started
    assert warm.model_path.exists()

    one_more = [*facts, {"head_entity_id": "e0", "relation": "r0", "tail_entity_id": "e7"}]
    second = sync_structure(db, "c__structure", ids, _text(), one_more, config, warm)
    assert second.bank is not None and second.bank.result.warm_started
    assert len(second.bank.result.losses) == 4 and second.graph_hash != first.graph_hash

    unchanged = sync_structure(db, "c__structure", ids, _text(), one_more, config, warm)
    assert unchanged.bank is None and unchanged.version == second.version

    many_more = [
        *one_more,
        *({"head_entity_id": f"e{i}", "relation": "r1", "tail_entity_id": "e3"} for i in range(9)),
    ]
    third = sync_structure(db, "c__structure", ids, _text(), many_more, config, warm)
    assert third.bank is not None and not third.bank.result.warm_started, "drift past 5 %"
    assert len(third.bank.result.losses) == 20


def test_a_collection_left_without_entities_keeps_the_versions_snapshots_pin(tmp_path) -> None:
    db = lancedb.connect(tmp_path / "lance")
    ids, facts = _ring_graph()
    config = RGCNConfig(dim=16, epochs=3)
    first = sync_structure(db, "c__structure", ids, _text(), facts, config)
    pinned = db.open_table("c__structure")
    pinned.checkout(first.version)
    rows = pinned.to_arrow()

    emptied = sync_structure(db, "c__structure", [], np.zeros((0, 8), np.float32), [], config)
    assert emptied.version is not None and emptied.version > first.version
    assert db.open_table("c__structure").count_rows() == 0
    again = sync_structure(db, "c__structure", ids, _text(), facts, config)
    assert again.version is not None and again.version > emptied.version

    old = db.open_table("c__structure")
    old.checkout(first.version)
    assert old.to_arrow().equals(rows), "the pinned version still holds the first build's rows"
