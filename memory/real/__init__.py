"""REAL's retrieval (papers/real.md §4): root-entity anchoring with exploration intents,
intent-aware hybrid beam search scored by a semantic evaluator, and budgeted
counterfactual repair. Each module has one job; `memory.strategies.real_beam` wires them.
"""
