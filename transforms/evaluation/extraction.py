"""Extraction quality on Re-DocRED-layout data: mention-level NER and document-level relations.

**NER.** Gold mentions are the `vertexSet` mentions with exact char spans into the rebuilt
text (`transforms.redocred`); types map to KGERMAR types with `transforms.entity_types`
(PER -> Person, ORG -> Organization, LOC -> Location, MISC -> Concept, TIME / NUM ->
Value). A predicted mention is correct when its char span is identical and, for the typed
score, its mapped type equals the gold one; the untyped score ignores types. Scores are
micro-averaged over all mentions, also per gold type.

**Relations.** Gold triples are the `labels` mapped onto the relation inventory with
direction fixed (`RelationInventory.map_wikidata`), restricted to pairs of graph entities
(clusters typed Person, Organization, Location, Concept: pipelines never relate dates and
numbers), deduplicated per document as (head cluster, label, tail cluster). A predicted
triple's head and tail char spans are matched to gold clusters by span overlap (the gold
mention overlapping most; ties to the earlier one); predictions whose ends match no
cluster, or the same cluster, stay distinct false positives. Scores are micro-averaged
over documents, also per label.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from transforms.entity_types import entity_type, is_graph_entity
from transforms.redocred import Document
from transforms.relation_inventory import DEFAULT_INVENTORY, RelationInventory


@dataclass(frozen=True)
class Scores:
    """Micro precision, recall and F1 from counts."""

    true_positives: int
    predicted: int
    gold: int

    @property
    def precision(self) -> float:
        return self.true_positives / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.true_positives / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def to_dict(self) -> dict[str, float | int]:
        return {
            **asdict(self),
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
        }


def score_sets(predicted: set[Any], gold: set[Any]) -> Scores:
    """Scores of a predicted set against a gold set."""
    return Scores(len(predicted & gold), len(predicted), len(gold))


@dataclass(frozen=True)
class PredictedMention:
    """A mention from an NER model: document, char span into its text, model label."""

    doc_id: str
    char_start: int
    char_end: int
    label: str


@dataclass(frozen=True)
class NerScores:
    """Typed and untyped mention scores, and typed scores per gold KGERMAR type."""

    typed: Scores
    untyped: Scores
    per_type: dict[str, Scores] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "typed": self.typed.to_dict(),
            "untyped": self.untyped.to_dict(),
            "per_type": {k: v.to_dict() for k, v in self.per_type.items()},
        }


def score_mentions(
    documents: Sequence[Document], predicted: Iterable[PredictedMention]
) -> NerScores:
    """Mention-level NER scores of `predicted` against the gold mentions of `documents`."""
    gold = {
        (d.doc_id, m.char_start, m.char_end, entity_type(m.label))
        for d in documents
        for m in d.mentions
    }
    wanted = {d.doc_id for d in documents}
    found = {
        (p.doc_id, p.char_start, p.char_end, entity_type(p.label))
        for p in predicted
        if p.doc_id in wanted
    }
    per_type = {}
    for type_name in sorted({g[3] for g in gold}):
        type_gold = {g for g in gold if g[3] == type_name}
        per_type[type_name] = score_sets({f for f in found if f[3] == type_name}, type_gold)
    return NerScores(
        typed=score_sets(found, gold),
        untyped=score_sets({f[:3] for f in found}, {g[:3] for g in gold}),
        per_type=per_type,
    )


@dataclass(frozen=True)
class PredictedTriple:
    """An extractor's triple: document, head and tail char spans into its text, inventory
    relation label, confidence."""

    doc_id: str
    head: tuple[int, int]
    relation: str
    tail: tuple[int, int]
    confidence: float = 1.0


@dataclass(frozen=True)
class RelationScores:
    """Document-level relation scores, overall and per inventory label, and how many
    predicted triples had an end matching no gold entity."""

    overall: Scores
    per_label: dict[str, Scores]
    unmatched_predictions: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall.to_dict(),
            "per_label": {k: v.to_dict() for k, v in self.per_label.items()},
            "unmatched_predictions": self.unmatched_predictions,
        }


def graph_entities(document: Document) -> set[int]:
    """Indices of the clusters typed as graph entities (not dates or numbers)."""
    return {e.index for e in document.entities if is_graph_entity(entity_type(e.label))}


def gold_triples(
    documents: Sequence[Document], inventory: RelationInventory = DEFAULT_INVENTORY
) -> set[tuple[str, int, str, int]]:
    """(doc id, head cluster, inventory label, tail cluster) of the gold graph relations."""
    triples = set()
    for document in documents:
        graph = graph_entities(document)
        for rel in document.relations:
            head, label, tail = inventory.map_wikidata(rel.relation, rel.head, rel.tail)
            if {head, tail} <= graph and label != inventory.none:
                triples.add((document.doc_id, head, label, tail))
    return triples


def match_cluster(document: Document, span: tuple[int, int]) -> int | None:
    """The gold cluster whose mention overlaps `span` most (earliest on ties), or None."""
    best, best_overlap = None, 0
    for mention in document.mentions:
        overlap = min(span[1], mention.char_end) - max(span[0], mention.char_start)
        if overlap > best_overlap:
            best, best_overlap = mention.entity, overlap
    return best


def score_relations(
    documents: Sequence[Document],
    predicted: Iterable[PredictedTriple],
    inventory: RelationInventory = DEFAULT_INVENTORY,
) -> RelationScores:
    """Document-level relation scores of `predicted` against `documents`' gold triples."""
    by_id = {d.doc_id: d for d in documents}
    gold = gold_triples(documents, inventory)
    found: set[tuple[Any, ...]] = set()
    unmatched = 0
    for triple in predicted:
        document = by_id.get(triple.doc_id)
        if document is None:
            continue
        head, tail = match_cluster(document, triple.head), match_cluster(document, triple.tail)
        if head is None or tail is None:
            unmatched += 1
        found.add(
            (
                triple.doc_id,
                head if head is not None else ("span", *triple.head),
                triple.relation,
                tail if tail is not None else ("span", *triple.tail),
            )
        )
    labels: dict[str, tuple[set[Any], set[Any]]] = defaultdict(lambda: (set(), set()))
    for item in gold:
        labels[item[2]][1].add(item)
    for item in found:
        labels[item[2]][0].add(item)
    return RelationScores(
        overall=score_sets(found, gold),
        per_label={k: score_sets(*v) for k, v in sorted(labels.items())},
        unmatched_predictions=unmatched,
    )


@dataclass(frozen=True)
class ExtractorResult:
    """One relation extractor scored on one document set."""

    extractor: str
    mentions: str  # where the entity mentions came from: "gold" or an NER model
    split: str
    documents: int
    scores: RelationScores
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "extractor": self.extractor,
            "mentions": self.mentions,
            "split": self.split,
            "documents": self.documents,
            "seconds": round(self.seconds, 2),
            **self.scores.to_dict(),
        }


@dataclass(frozen=True)
class ExtractionReport:
    """Everything `kgmem eval extraction` prints."""

    dataset: str
    documents: int
    ner: Mapping[str, NerScores]
    ner_seconds: float
    relations: Sequence[ExtractorResult]

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "documents": self.documents,
            "ner": {k: v.to_dict() for k, v in self.ner.items()},
            "ner_seconds": self.ner_seconds,
            "relations": [r.to_dict() for r in self.relations],
        }

    def table(self) -> str:
        """Plain-text tables of the report."""
        lines = [f"dataset: {self.dataset} ({self.documents} documents)", ""]
        lines.append(
            f"{'NER model':<32}{'scoring':<12}{'P':>8}{'R':>8}{'F1':>8}"
            f"   ({self.ner_seconds:.1f} s)"
        )
        for model, ner in self.ner.items():
            for name, scores in [("typed", ner.typed), ("untyped", ner.untyped)]:
                lines.append(f"{model:<32}{name:<12}{_prf(scores)}")
            for type_name, scores in ner.per_type.items():
                lines.append(f"{'':<32}{type_name:<12}{_prf(scores)}")
        lines += [
            "",
            f"{'extractor':<44}{'mentions':<12}{'split':<10}{'docs':>5}"
            f"{'P':>8}{'R':>8}{'F1':>8}{'s':>8}",
        ]
        for r in self.relations:
            lines.append(
                f"{r.extractor:<44}{r.mentions:<12}{r.split:<10}{r.documents:>5}"
                f"{_prf(r.scores.overall)}{r.seconds:>8.1f}"
            )
        return "\n".join(lines)


def _prf(scores: Scores) -> str:
    return f"{scores.precision:>8.3f}{scores.recall:>8.3f}{scores.f1:>8.3f}"
