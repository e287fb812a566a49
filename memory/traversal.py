"""What every graph strategy shares around its own traversal: the switch that turns the
traversal off (the evaluation's `NAME:no_traversal` ablation rows) and the blend of the
traversal's segment ranking with the flat `hybrid` prior it starts from.

- `traversal_off(query)`: the query's option `traversal` is "off". A graph strategy then
  returns its flat prior, the `hybrid` ranking, so the difference between a strategy's row
  and its `:no_traversal` row in `kgmem eval retrieval` is what its traversal adds.
  `without_traversal` wraps a strategy so that no strategy has to test the switch itself.
- `blended(...)`: the traversal's scores and the flat ranking fused by z-scores with the
  strategy's flat share per corpus kind (`transforms.traversal_blend`: pinned by the
  snapshot, the option `flat_share` overrides it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory.corpus_kinds import weights_by_kind
from memory.flat_prior import FlatPrior, flat_prior
from memory.snapshot_view import QueryContext, SnapshotView
from memory.strategies.base import Ranking, Strategy
from transforms.rank_fusion import combine, normalised
from transforms.traversal_blend import flat_shares

TRAVERSAL_OPTION = "traversal"
"""The query option that switches a graph strategy's traversal: "off" or "on" (default)."""
ABLATION_SUFFIX = ":no_traversal"
"""An evaluated name's suffix for a strategy run with its traversal off."""


def traversal_off(options: Mapping[str, Any]) -> bool:
    """Whether the query's options switch the traversal off (refusing values other than
    on and off)."""
    value = str(options.get(TRAVERSAL_OPTION, "on")).lower()
    if value not in ("on", "off"):
        raise ValueError(f"option {TRAVERSAL_OPTION} must be 'on' or 'off', got {value!r}")
    return value == "off"


def without_traversal(name: str, strategy: Strategy) -> Strategy:
    """`strategy`, which with the option traversal=off returns the flat prior (the `hybrid`
    ranking of the same query) with an explanation that says so."""

    def run(view: SnapshotView, query: QueryContext) -> Ranking:
        if not traversal_off(query.options):
            return strategy(view, query)
        prior = flat_prior(view, query)
        scored = [(s, round(score, 6)) for s, score in prior.fused[: query.k]]
        return Ranking(scored, {"strategy": name, "traversal": "off", "flat": prior.summary()})

    run.__name__ = getattr(strategy, "__name__", name)
    run.__doc__ = strategy.__doc__
    return run


def blended(
    view: SnapshotView,
    query: QueryContext,
    prior: FlatPrior,
    traversal: list[tuple[str, float]],
    strategy: str,
) -> tuple[list[tuple[str, float]], dict[str, float]]:
    """The traversal's (segment, score) list fused with the flat ranking, best first, and
    the flat shares used per corpus kind. Scores on any scale: each list is z-normalised
    on its own (the flat one once per query, `FlatPrior.normalised`); a traversal that
    reached nothing returns the flat ranking's order."""
    shares = flat_shares(strategy, view.snapshot.retrieval, query.options)
    by_kind = {kind: {"traversal": 1.0 - share, "flat": share} for kind, share in shares.items()}
    if not traversal:
        return list(prior.fused), shares
    weights_of = weights_by_kind(view, by_kind)
    lists = {"traversal": normalised(traversal), "flat": prior.normalised}
    return combine({n: z for n, z in lists.items() if z is not None}, weights_of), shares
