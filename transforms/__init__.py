"""Pure domain logic of every stage: loaders, segmenters, DoFns, consolidation, fact folding.

Nothing in this package imports Dagster, so every piece is unit-testable on its own and
usable from Beam workers.
"""
