"""What `kgmem build` checks before its first stage runs: each problem is one ValueError
naming the argument, setting or environment variable and the reason.

`check_request` loads no heavy library, so a wrong collection name or input path answers
in well under a second and leaves nothing in the workspace; `check_models` runs once the
settings are read (flags over `kgmem.toml`), so a missing encoder folder or spaCy package
fails at once instead of minutes into the build, at the stage that loads it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipelines.settings import BuildSettings

ENCODER_THREADS_ENV = "KGMEM_ENCODER_THREADS"


def check_request(collection: str, inputs: Sequence[str]) -> None:
    """The collection name, the input paths (each exists; a folder holds a file) and the
    environment settings a build reads."""
    from stores.workspace import check_collection_name
    from transforms.loaders import iter_input_files

    check_collection_name(collection)
    for given in inputs:
        if not os.path.lexists(given):
            raise ValueError(f"--input {given}: no such file or folder")
        if os.path.isdir(given) and next(iter_input_files([given]), None) is None:
            raise ValueError(f"--input {given}: the folder holds no file to load")
    check_environment()


def check_environment() -> None:
    """`$KGMEM_MAX_FILE_MB` (a number > 0) and `$KGMEM_ENCODER_THREADS` (an integer >= 0)."""
    from transforms.loaders import MAX_FILE_MB_ENV, max_file_bytes

    if max_file_bytes() <= 0:
        raise ValueError(f"{MAX_FILE_MB_ENV}={os.environ[MAX_FILE_MB_ENV]!r}: must be above 0")
    threads = os.environ.get(ENCODER_THREADS_ENV, "").strip()
    if threads and not (threads.isdigit()):
        raise ValueError(f"{ENCODER_THREADS_ENV}={threads!r}: expected an integer >= 0")


def check_models(settings: BuildSettings) -> None:
    """Every model the build will load exists: the spaCy pipeline, the NER model, the
    encoder and the second encoder (`transforms.model_refs`)."""
    from transforms.embedding import PACKAGED_ENCODERS
    from transforms.model_refs import check_hub_model, check_spacy_model
    from transforms.ner_backends import DEFAULT_HF_NER_MODEL, HF_BACKEND

    check_spacy_model("--spacy-model", settings.spacy_model)
    if settings.ner_backend == HF_BACKEND:
        check_hub_model("--ner-model", settings.ner_model or DEFAULT_HF_NER_MODEL)
    elif settings.ner_model:
        check_spacy_model("--ner-model", settings.ner_model)
    for option, model in (
        ("--encoder", settings.encoder_model),
        ("--fusion-encoder", settings.second_encoder),
    ):
        if model and model not in PACKAGED_ENCODERS:
            check_hub_model(option, model)
