"""Retrieval strategies over a snapshot view; each returns ranked segments and an explanation.

The registry (`memory.strategies.registry.STRATEGIES`) imports every strategy; the names
alone (`memory.strategies.names`) import nothing, for the CLI's choices.
"""
