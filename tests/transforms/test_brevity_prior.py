"""The brevity prior: a segment of few indexed terms loses weight / (1 + terms); weights
come from the query's option, else the snapshot, else the defaults."""

from __future__ import annotations

import pytest

from transforms.brevity_prior import (
    DEFAULT_BREVITY,
    brevity_weights,
    pinned_brevity,
    with_brevity_prior,
)


def test_a_short_segment_falls_behind_a_long_one_of_a_close_score() -> None:
    scored = [("filler", 1.0), ("evidence", 0.9), ("other", 0.1)]
    assert with_brevity_prior(scored, [3, 30, 10], [2.0, 2.0, 2.0]) == [
        ("evidence", pytest.approx(0.9 - 2 / 31)),
        ("filler", pytest.approx(1.0 - 2 / 4)),
        ("other", pytest.approx(0.1 - 2 / 11)),
    ]
    assert with_brevity_prior(scored, [3, 30, 10], [0.0, 0.0, 0.0]) == scored


def test_weights_come_from_the_option_then_the_snapshot_then_the_defaults() -> None:
    assert brevity_weights({}, {}) == DEFAULT_BREVITY
    assert DEFAULT_BREVITY["documents"] == 0.0 < DEFAULT_BREVITY["conversations"]
    pinned = {"brevity_prior": {"conversations": 0.5}}
    assert brevity_weights(pinned, {}) == {"documents": 0.0, "conversations": 0.5}
    assert set(brevity_weights(pinned, {"brevity": 1.5}).values()) == {1.5}
    with pytest.raises(ValueError, match="brevity"):
        brevity_weights(pinned, {"brevity": -1})
    assert pinned_brevity() == {"brevity_prior": DEFAULT_BREVITY}
