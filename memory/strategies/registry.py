"""The strategy registry: each retrieval strategy by its name (imports every strategy)."""

from memory.strategies.base import Strategy
from memory.strategies.bm25 import bm25
from memory.strategies.dense import dense
from memory.strategies.gram_paths import gram_paths
from memory.strategies.hybrid import hybrid
from memory.strategies.kgermar_fusion import kgermar_fusion
from memory.strategies.memorai_dwpr import memorai_dwpr
from memory.strategies.names import STRATEGY_NAMES
from memory.strategies.personalai import (
    personalai_astar,
    personalai_astar_bs,
    personalai_astar_wc,
    personalai_beam,
    personalai_water_circles,
    personalai_wc_bs,
)
from memory.strategies.ppr import ppr
from memory.strategies.real_beam import real_beam
from memory.traversal import without_traversal

STRATEGIES: dict[str, Strategy] = {
    "dense": dense,
    "bm25": bm25,
    "hybrid": hybrid,
    "hipporag_ppr": ppr,
    "memorai_dwpr": memorai_dwpr,
    "gram_paths": gram_paths,
    "kgermar_fusion": kgermar_fusion,
    "personalai_astar": personalai_astar,
    "personalai_water_circles": personalai_water_circles,
    "personalai_beam": personalai_beam,
    "personalai_wc_bs": personalai_wc_bs,
    "personalai_astar_bs": personalai_astar_bs,
    "personalai_astar_wc": personalai_astar_wc,
    "real_beam": real_beam,
}
FLAT_STRATEGIES = ("dense", "bm25", "hybrid")
"""Strategies without a graph traversal; every other one starts from the `hybrid` prior and
returns it with the option traversal=off (`memory.traversal.without_traversal`)."""
GRAPH_STRATEGIES = tuple(name for name in STRATEGIES if name not in FLAT_STRATEGIES)
STRATEGIES.update({name: without_traversal(name, STRATEGIES[name]) for name in GRAPH_STRATEGIES})
assert tuple(STRATEGIES) == STRATEGY_NAMES, "register every strategy in names.py too"
