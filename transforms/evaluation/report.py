"""The extraction evaluation run: NER and every relation extractor on a Re-DocRED file.

Documents are cut into chunks as the `segments` stage cuts text. Each relation extractor
runs twice: on the spaCy NER mentions (end to end, as in a build) and on the gold mentions
(isolating relation quality from NER errors). The NER model and the dependency patterns
are scored on every document (split `all`). A trained classifier and any extra extractors
are scored on the documents the classifier's artifact held out when it was trained on
this very file (same SHA-256; split `held-out`), else on every document; the dependency
patterns are scored on that split too, so all extractors compare on the same documents.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from transforms.evaluation.extraction import (
    ExtractionReport,
    ExtractorResult,
    score_mentions,
    score_relations,
)
from transforms.evaluation.extractors import (
    Extractor,
    classifier_extractor,
    dependency_extractor,
    mentions_of,
    with_model_mentions,
)
from transforms.ner_backends import DEFAULT_SPACY_MODEL
from transforms.redocred import Document, gold_segments, load_redocred
from transforms.relation_classifier.probe import ProbeBackend
from transforms.relation_classifier.training import dataset_sha256


def held_out_documents(
    documents: Sequence[Document], dataset: Path, metadata: Mapping[str, Any]
) -> list[Document]:
    """The documents a classifier did not train on (all of them for another file)."""
    if metadata["dataset"]["sha256"] != dataset_sha256(dataset):
        return list(documents)
    held = set(metadata["split"]["held_out_doc_ids"])
    return [d for d in documents if d.doc_id in held]


def _run(
    name: str,
    extractor: Extractor,
    documents: Sequence[Document],
    segments: Mapping[str, Sequence[Mapping[str, Any]]],
    split: str,
) -> list[ExtractorResult]:
    results = []
    wanted = {d.doc_id for d in documents}
    for source, rows in segments.items():
        chosen = [s for s in rows if s["doc_id"] in wanted]
        started = time.perf_counter()
        predicted = list(extractor(chosen))
        results.append(
            ExtractorResult(
                extractor=name,
                mentions=source,
                split=split,
                documents=len(documents),
                scores=score_relations(documents, predicted),
                seconds=time.perf_counter() - started,
            )
        )
    return results


def evaluate_extraction(
    dataset: str | Path,
    spacy_model: str = DEFAULT_SPACY_MODEL,
    classifier: ProbeBackend | None = None,
    extra: Mapping[str, Extractor] | None = None,
    limit: int | None = None,
) -> ExtractionReport:
    """Score spaCy NER, the dependency patterns, a trained `classifier` (with and without
    the KGERMAR weight filter) and `extra` extractors on `dataset` (first `limit`
    documents)."""
    dataset = Path(dataset)
    documents = load_redocred(dataset)[:limit]
    gold = [row for document in documents for row in gold_segments(document)]
    started = time.perf_counter()
    predicted = with_model_mentions(gold, spacy_model)
    ner_seconds = time.perf_counter() - started
    segments = {"spacy": predicted, "gold": gold}
    dependency = dependency_extractor(spacy_model)
    relations = _run("dep_patterns/v1", dependency, documents, segments, "all")
    compared: dict[str, Extractor] = {}
    held, split = documents, "all"
    if classifier is not None:
        held = held_out_documents(documents, dataset, classifier.metadata)
        split = "held-out" if len(held) < len(documents) else "all"
        window = classifier.metadata["config"]["window"]
        compared[classifier.extractor] = classifier_extractor(classifier, window)
        compared[f"{classifier.extractor} w>0.5"] = classifier_extractor(
            classifier, window, weighted=True
        )
    compared.update(extra or {})
    if compared and split != "all":
        relations += _run("dep_patterns/v1", dependency, held, segments, split)
    for name, extractor in compared.items():
        relations += _run(name, extractor, held, segments, split)
    return ExtractionReport(
        dataset=str(dataset),
        documents=len(documents),
        ner={spacy_model: score_mentions(documents, mentions_of(predicted))},
        ner_seconds=round(ner_seconds, 2),
        relations=relations,
    )
