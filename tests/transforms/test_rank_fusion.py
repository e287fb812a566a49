"""Fusing signal lists by z-scores: normalisation, the missing-item floor, per-item weights,
and the vectorised sum against the per-item one."""

import random

import pytest

from transforms.rank_fusion import combine, contributions, fuse, normalise, z_scores


def test_z_scores_centre_and_scale_each_list():
    z = z_scores([("a", 3.0), ("b", 2.0), ("c", 1.0)])
    assert z["b"] == pytest.approx(0.0)
    assert z["a"] == pytest.approx(-z["c"]) == pytest.approx(1.2247, abs=1e-4)
    assert z_scores([("a", 5.0), ("b", 5.0)]) == {"a": 0.0, "b": 0.0}
    assert z_scores([]) == {}


def test_an_item_missing_from_a_list_gets_its_floor():
    lexical = [("a", 10.0), ("b", 1.0), ("c", 0.5)]
    semantic = [("b", 0.9), ("d", 0.8), ("a", 0.1)]
    fused = dict(fuse({"lex": lexical, "sem": semantic}, lambda _item: {"lex": 0.5, "sem": 0.5}))
    floor_lex = min(z_scores(lexical).values())
    assert fused["d"] == pytest.approx(0.5 * floor_lex + 0.5 * z_scores(semantic)["d"])
    assert set(fused) == {"a", "b", "c", "d"}


def test_weights_decide_the_order_and_may_differ_per_item():
    lexical = [("turn", 9.0), ("chunk", 1.0), ("other", 0.0)]
    semantic = [("chunk", 0.9), ("turn", 0.2), ("other", 0.1)]
    signals = {"lex": lexical, "sem": semantic}
    by_meaning = fuse(signals, lambda _item: {"lex": 0.0, "sem": 1.0})
    assert [item for item, _ in by_meaning][:2] == ["chunk", "turn"]
    per_kind = fuse(signals, lambda item: {"lex": 1.0} if item == "turn" else {"sem": 1.0})
    assert per_kind[0][0] == "turn"
    assert contributions("turn", normalise(signals), {"lex": 1.0}) == {
        "lex": pytest.approx(z_scores(lexical)["turn"], abs=1e-4),
        "sem": 0.0,
    }


def test_an_empty_signal_adds_nothing():
    fused = fuse({"lex": [], "sem": [("a", 0.9), ("b", 0.1)]}, lambda _i: {"lex": 1, "sem": 1})
    assert [item for item, _ in fused] == ["a", "b"]


def _per_item_combine(normal, weights_of):
    """`combine` as it was written before it added signal by signal: a sum per item."""
    items = sorted({item for z, _ in normal.values() for item in z})
    fused = []
    for item in items:
        weights = weights_of(item)
        score = sum(
            weights.get(name, 0.0) * z.get(item, floor) for name, (z, floor) in normal.items()
        )
        fused.append((item, score))
    return sorted(fused, key=lambda pair: (-pair[1], pair[0]))


@pytest.mark.parametrize("seed", range(5))
def test_combine_is_the_per_item_sum_bit_for_bit(seed):
    """Same items, order and scores to the bit: ties (repeated scores, an all-equal list),
    items missing from some lists, weights per item (ints, a signal left out)."""
    rng = random.Random(seed)
    ids = [f"s{rng.randrange(400):03d}" for _ in range(300)]
    signals = {
        "walk": [(i, -rng.random() * 20) for i in ids[:200]],
        "flat": [(i, float(rng.randrange(8))) for i in ids[120:260]],
        "same": [(i, 1.5) for i in ids[250:]],
    }
    by_kind = [{"walk": 0.7, "flat": 0.3}, {"walk": 1, "flat": 0, "same": 2}, {"flat": 1.0}]

    def weights_of(item):
        return by_kind[int(item[1:]) % 3]

    normal = normalise(signals)
    got, want = combine(normal, weights_of), _per_item_combine(normal, weights_of)
    assert [item for item, _ in got] == [item for item, _ in want]
    assert [score.hex() for _, score in got] == [float(score).hex() for _, score in want]
    assert len({score for _, score in got}) < len(got), "the lists have tied scores"
