"""Entity-consolidation quality on Re-DocRED's coreference groups (`vertexSet`).

Every gold entity cluster is a coreference group of mentions. Per document, the mention
keys (normalised names) of graph-entity types are resolved by the cascade, and predicted
groups are compared with gold ones by pairwise precision / recall / F1 over pairs of keys
of the same document (a key belongs to the gold cluster most of its mentions belong to).
The baseline is normalisation alone (every key its own entity), so the figures show what
the Levenshtein, surname and embedding steps add.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from transforms.consolidation import normalize_name
from transforms.entity_resolution import ResolutionConfig, resolve
from transforms.entity_types import entity_type, is_graph_entity
from transforms.redocred import Document


@dataclass(frozen=True)
class PairwiseScore:
    """Pairwise precision, recall and F1 of one method over all documents."""

    method: str
    precision: float
    recall: float
    f1: float
    pairs_gold: int
    pairs_predicted: int


def _gold_keys(document: Document) -> dict[str, int]:
    votes: dict[str, Counter[int]] = defaultdict(Counter)
    for entity in document.entities:
        for mention in entity.mentions:
            key = normalize_name(mention.text)
            if key and is_graph_entity(entity_type(mention.label)):
                votes[key][entity.index] += 1
    return {key: counter.most_common(1)[0][0] for key, counter in votes.items()}


def _pairs(groups: dict[str, object]) -> set[frozenset[str]]:
    return {frozenset(p) for p in combinations(sorted(groups), 2) if groups[p[0]] == groups[p[1]]}


def consolidation_scores(
    documents: Iterable[Document],
    embed: Callable[[Sequence[str]], np.ndarray] | None,
    cfg: ResolutionConfig | None = None,
) -> list[PairwiseScore]:
    """Pairwise scores of the full cascade and of normalisation alone."""
    counts = {"cascade": [0, 0, 0], "normalized": [0, 0, 0]}  # true positives, predicted, gold
    for document in documents:
        gold = _gold_keys(document)
        surfaces = [
            (m.text, entity_type(m.label))
            for e in document.entities
            for m in e.mentions
            if normalize_name(m.text) in gold
        ]
        predicted = resolve(document.doc_id, surfaces, embed, cfg or ResolutionConfig()).entity_of()
        gold_pairs = _pairs(gold)
        for method, groups in (("cascade", predicted), ("normalized", {k: k for k in gold})):
            pairs = _pairs({k: groups[k] for k in gold})
            counts[method][0] += len(pairs & gold_pairs)
            counts[method][1] += len(pairs)
            counts[method][2] += len(gold_pairs)
    return [_score(method, *c) for method, c in counts.items()]


def _score(method: str, true_positives: int, predicted: int, gold: int) -> PairwiseScore:
    precision = true_positives / predicted if predicted else 1.0
    recall = true_positives / gold if gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return PairwiseScore(
        method, round(precision, 4), round(recall, 4), round(f1, 4), gold, predicted
    )
