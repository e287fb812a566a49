"""Retrieval strategies over a snapshot view; each returns ranked segments and an explanation."""

from memory.strategies.base import Ranking, Strategy
from memory.strategies.bm25 import bm25
from memory.strategies.dense import dense
from memory.strategies.ppr import ppr

STRATEGIES: dict[str, Strategy] = {"dense": dense, "bm25": bm25, "ppr": ppr}

__all__ = ["STRATEGIES", "Ranking", "Strategy"]
