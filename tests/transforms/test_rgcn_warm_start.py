"""Incremental R-GCN training: a warm start resumes from earlier weights (and refuses ones
that do not fit), and `warm_start_plan` trains cold when the drift since the last cold run
would pass the staleness bound, the relation types or configuration changed, or the bound
is 0."""

from __future__ import annotations

import numpy as np
import pytest

from tests.transforms.test_rgcn import N, _ring, _text
from transforms.rgcn import RGCNConfig, train_rgcn
from transforms.structural_bank import (
    TrainedModel,
    config_digest,
    structural_rows,
    triple_keys,
    warm_start_plan,
)

CONFIG = RGCNConfig(dim=16, epochs=60)


def test_a_warm_start_resumes_where_the_last_run_ended() -> None:
    heads, relations, tails = _ring()
    cold = train_rgcn(heads, relations, tails, N, _text(), CONFIG)
    warm = train_rgcn(heads, relations, tails, N, _text(), CONFIG, warm_start=cold.state, epochs=5)
    fresh = train_rgcn(heads, relations, tails, N, _text(), CONFIG, epochs=5)
    assert warm.warm_started and not cold.warm_started and len(warm.losses) == 5
    assert warm.losses[0] < 0.8 * fresh.losses[0], "starts from trained weights"
    assert warm.losses[0] == pytest.approx(cold.losses[-1], rel=0.3)


def test_weights_of_another_shape_are_refused() -> None:
    heads, relations, tails = _ring()
    narrow = train_rgcn(heads, relations, tails, N, _text(), RGCNConfig(dim=8, epochs=2))
    with pytest.raises(ValueError, match="do not fit"):
        train_rgcn(heads, relations, tails, N, _text(), CONFIG, warm_start=narrow.state)


@pytest.mark.parametrize("separate_inverse", [False, True])
def test_weights_of_known_relation_types_carry_over_by_name(separate_inverse: bool) -> None:
    heads, relations, tails = _ring()
    config = RGCNConfig(dim=16, epochs=3, separate_inverse=separate_inverse)
    before = train_rgcn(heads, relations, tails, N, _text(), config)
    # now three types: the old 1 is new index 2, a new type sits at index 1
    now = np.where(relations == 1, 2, relations)
    mapping = np.array([0, -1, 1])
    warm = train_rgcn(
        heads, now, tails, N, _text(), config, n_relations=3, warm_start=before.state,
        epochs=0, relation_map=mapping,
    )  # fmt: skip
    old, new = before.state, warm.state
    np.testing.assert_array_equal(new["decoder.bases"][[0, 2]], old["decoder.bases"][[0, 1]])
    assert not np.array_equal(new["decoder.bases"][1], old["decoder.bases"][0])
    layer = "layers.0.relations.bases"
    if separate_inverse:  # rows: 3 forward, then 3 inverse types
        np.testing.assert_array_equal(new[layer][[0, 2, 3, 5]], old[layer][[0, 1, 2, 3]])
    else:
        np.testing.assert_array_equal(new[layer][[0, 2]], old[layer][[0, 1]])
    np.testing.assert_array_equal(new["fusion.weight"], old["fusion.weight"])


def _model(keys: np.ndarray, drift: float = 0.0, relations: list[str] | None = None):
    return TrainedModel({}, relations or ["r"], config_digest(CONFIG), keys, drift)


def test_plan_warm_within_the_bound_and_cold_beyond_it() -> None:
    triples = [(f"e{i}", "r", f"e{i + 1}") for i in range(100)]
    before = _model(triple_keys(triples))
    now = triple_keys([*triples[:-2], ("x", "r", "y"), ("y", "r", "z")])
    start, change = warm_start_plan(before, ["r"], now, CONFIG, staleness=0.1)
    assert start is before and change == pytest.approx(0.04)  # 2 removed + 2 added of 100
    assert warm_start_plan(_model(before.triple_keys, 0.08), ["r"], now, CONFIG, 0.1) == (None, 0)
    assert warm_start_plan(before, ["r"], now, CONFIG, staleness=0.0) == (None, 0.0)
    assert warm_start_plan(None, ["r"], now, CONFIG, 0.1) == (None, 0.0)
    assert warm_start_plan(before, ["r", "s"], now, CONFIG, 0.1)[0] is before, "a new type"
    many = [f"r{i}" for i in range(9)]  # past the basis threshold: another weight layout
    assert warm_start_plan(before, many, now, CONFIG, 0.1) == (None, 0.0)
    other = RGCNConfig(dim=16, epochs=60, seed=3)
    assert warm_start_plan(before, ["r"], now, other, 0.1) == (None, 0.0)


def test_structural_rows_carry_the_drift_forward() -> None:
    ids = [f"e{i}" for i in range(N)]
    facts = [
        {"head_entity_id": f"e{h}", "relation": f"r{r}", "tail_entity_id": f"e{t}"}
        for h, r, t in zip(*_ring(), strict=True)
    ]
    cold = structural_rows(ids, _text(), facts, CONFIG, staleness=0.5, warm_epochs=3)
    assert not cold.result.warm_started and cold.model.drift == 0.0
    grown = [*facts, {"head_entity_id": "e0", "relation": "r0", "tail_entity_id": "e9"}]
    warm = structural_rows(ids, _text(), grown, CONFIG, cold.model, staleness=0.5, warm_epochs=3)
    assert warm.result.warm_started and len(warm.result.losses) == 3
    assert warm.change == pytest.approx(1 / 60) and warm.model.drift == pytest.approx(1 / 60)
