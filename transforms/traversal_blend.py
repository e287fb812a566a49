"""How much of the flat `hybrid` ranking each graph strategy keeps when it blends its own
traversal with it, per corpus kind: the settings a snapshot pins (`memory_snapshot`) and
`memory.traversal.blended` reads.

A strategy's blended score of a segment is

    (1 - flat_share) x z(traversal score) + flat_share x z(flat score)

over the union of both lists (`transforms.rank_fusion.fuse`: z-normalised per list, a
segment missing from one list gets that list's floor), with `flat_share` by the segment's
corpus kind (`transforms.hybrid_weights.CORPUS_KINDS`). None of the five papers starts
from a fused flat ranking, so none says how to combine with one: the shares are fitted
per corpus kind on the dev splits, as `hybrid`'s weights and `hipporag_ppr`'s blend are
(the figures beside each strategy's entry, where it was fitted). A share of 1 returns the
flat ranking (the strategy's traversal then adds nothing); 0 ranks by the traversal alone,
the flat ranking only breaking its ties and filling its tail.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEFAULT_FLAT_SHARE: dict[str, dict[str, float]] = {
    "hipporag_ppr": {"documents": 0.0, "conversations": 0.3},
    # memorai_dwpr, LoCoMo dev (first 300 questions, hybrid turn R@10 65.9) turn R@10 at
    # flat share 0.0 / 0.1 / 0.2 / 0.3 / 0.4: 78.6 / 79.3 / 79.1 / 76.8 / 75.1, session R@10
    # 88.4 / 89.8 / 89.8 / 90.6 / 91.8: 0.2, the plateau's end that keeps more sessions;
    # documents, MuSiQue dev (100 questions, hybrid R@5 67.5) R@5 at 0.0 / 0.1 / 0.2 / 0.3 /
    # 0.5: 75.4 / 75.9 / 74.3 / 74.3 / 69.6 (`kgmem train traversal-blend`)
    "memorai_dwpr": {"documents": 0.1, "conversations": 0.2},
    # kgermar_fusion (log structural scores, 100 candidates), MuSiQue dev (all 100
    # questions) R@5 at flat share 0.1 / 0.15 / 0.2 / 0.25 / 0.3: 70.9 / 71.7 / 72.8 /
    # 71.8 / 71.5 (hybrid 67.5); LoCoMo dev (first 300 questions, banks min-max to 0) turn
    # R@10 at 0.2 / 0.3: 81.8 / 80.7, session R@10 87.6 / 89.2 (76.7 and 90.4 before, at
    # 0.3): 0.3 keeps the sessions; all LoCoMo dev at 0.3: 79.0 (hybrid 68.2)
    "kgermar_fusion": {"documents": 0.2, "conversations": 0.3},
    # real_beam (evidence weighted by its root's prior mass, summed per segment, issue 35),
    # MuSiQue dev (all 100 questions) R@5 at flat share 0.3 / 0.4 / 0.5 / 0.6: 71.7 / 73.3 /
    # 74.0 / 72.3 (hybrid 67.5); LoCoMo dev (first 400) turn R@10 at 0.3 / 0.5: 75.2 / 75.0,
    # turn-ranking session R@10 86.8 / 90.1: 0.5, which keeps more sessions
    "real_beam": {"documents": 0.5, "conversations": 0.5},
    # gram_paths (walk mass of the paths from the anchors, issue 35), MuSiQue dev (all 100
    # questions) R@5 at flat share 0.4 / 0.5 / 0.6: 74.3 / 74.7 / 74.7 (hybrid 67.5);
    # LoCoMo dev (first 400) turn R@10 at 0.2 / 0.3 / 0.4: 75.9 / 76.1 / 76.1 (hybrid ~67)
    "gram_paths": {"documents": 0.5, "conversations": 0.3},
    # personalai (all six variants; fragments scored by the prior mass their nodes carry),
    # MuSiQue dev (all 100 questions) R@5 at flat share 0.2 / 0.3: A* 73.5 / 73.2,
    # WaterCircles 74.5 / 72.4, beam 71.7 / 71.2, WC+BS 74.5 / 72.4, A*+BS 73.5 / 73.2,
    # A*+WC 74.5 / 72.7 (WaterCircles at 0.0 / 0.1: 70.9 / 74.3; hybrid 67.5).
    # Conversations keep the count k and its share (`personalai.WALKED_KINDS`): LoCoMo dev
    # (first 300 questions, hybrid 65.9) turn R@10 at 0.4 / 0.5: A* 71.2 / 71.5,
    # WaterCircles 69.7 / 71.3, beam 70.9 / 70.8, WC+BS 71.9 / 71.5, A*+BS 71.7 / 71.9,
    # A*+WC 71.7 / 71.6; full LoCoMo dev at 0.5: 72.1-73.0 (hybrid 67.9)
    "personalai": {"documents": 0.2, "conversations": 0.5},
}
"""Per strategy (the six PersonalAI variants share `personalai`), per corpus kind: the
flat ranking's share of the blend."""
SETTINGS_KEY = "traversal_blend"
"""Where a snapshot's retrieval settings keep the shares it pins."""


def blend_family(strategy: str) -> str:
    """The entry of `DEFAULT_FLAT_SHARE` a strategy reads (`personalai_beam` -> `personalai`)."""
    return "personalai" if strategy.startswith("personalai") else strategy


def pinned_blend() -> dict[str, Any]:
    """What a new snapshot pins: every strategy's flat share per corpus kind."""
    return {SETTINGS_KEY: {name: dict(shares) for name, shares in DEFAULT_FLAT_SHARE.items()}}


def flat_shares(
    strategy: str, retrieval: Mapping[str, Any], options: Mapping[str, Any]
) -> dict[str, float]:
    """The flat share per corpus kind that a query of `strategy` blends with: the query's
    `flat_share` option (one value for every kind), else the snapshot's pinned share
    (`retrieval`, its retrieval settings), else the default (a snapshot recorded before
    shares were pinned)."""
    family = blend_family(strategy)
    shares = dict(DEFAULT_FLAT_SHARE[family])
    shares.update(retrieval.get(SETTINGS_KEY, {}).get(family, {}))
    if options.get("flat_share") is not None:
        given = float(options["flat_share"])
        if not 0.0 <= given <= 1.0:
            raise ValueError(f"option flat_share must be in [0, 1], got {given}")
        shares = dict.fromkeys(shares, given)
    return shares
