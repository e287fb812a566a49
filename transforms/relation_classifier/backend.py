"""The interface every relation-classifier backend implements.

A backend turns segments with their candidate pairs into class probabilities: one row per
pair, one column per `classes` entry. Columns are inventory labels plus the no-relation
label; a backend may cover only part of the inventory (a classifier trained on data
without causal relations has no CausedBy column). Probabilities are calibrated: the
backend applies its own temperature.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from transforms.relation_classifier.pairs import SegmentPairs


class RelationBackend(Protocol):
    """A relation classifier over entity pairs in context."""

    @property
    def extractor(self) -> str:
        """Provenance name, `classifier/<backend>:<model>`."""
        ...

    @property
    def classes(self) -> tuple[str, ...]:
        """Label of each probability column."""
        ...

    @property
    def none_label(self) -> str:
        """The column meaning "no relation"."""
        ...

    def probabilities(self, items: Sequence[SegmentPairs]) -> list[np.ndarray]:
        """Per item, a (pairs x classes) matrix of calibrated probabilities."""
        ...
