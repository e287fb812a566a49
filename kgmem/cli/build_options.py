"""The build options of `kgmem build`, shared with `kgmem eval retrieval`, which builds the
benchmark's corpus with them: models, chunking, the LLM stage, the Beam runner and a
settings file (`--settings`, default `<home>/kgmem.toml`).

Each option maps onto a `PipelineSettings` field; one left out keeps the settings file's
value, else the field's default (`dagster_project.resources.settings_file`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kgmem.cli.beam_args import add_beam_arguments, beam_overrides


def add_build_options(parser: argparse.ArgumentParser) -> None:
    """Add the build options to `parser`."""
    parser.add_argument("--chunk-tokens", type=int, help="token budget of a document chunk")
    parser.add_argument("--spacy-model", help="spaCy package name or path for NER and parsing")
    parser.add_argument("--ner-backend", choices=["spacy", "hf"], help="NER backend")
    parser.add_argument("--ner-model", help="NER model: spaCy package/path or HF model id/path")
    parser.add_argument(
        "--encoder",
        help="encoder of every table: sentence-transformers model id or path, "
        "or packaged:multilingual-e5-small",
    )
    parser.add_argument(
        "--fusion-encoder",
        help="second encoder of segments for the hybrid strategy "
        "(default packaged:multilingual-e5-small; 'none' turns it off)",
    )
    llm = parser.add_mutually_exclusive_group()
    llm.add_argument(
        "--llm",
        metavar="BACKEND",
        help="LLM triplet stage backend: llama_cpp, openai, transformers",
    )
    llm.add_argument("--no-llm", action="store_true", help="skip the LLM triplet stage")
    parser.add_argument(
        "--settings",
        metavar="FILE",
        help="settings file (TOML, `PipelineSettings` fields; default <home>/kgmem.toml)",
    )
    add_beam_arguments(parser)


def build_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The `PipelineSettings` fields that the build options given in `args` set."""
    values = {
        "chunk_tokens": args.chunk_tokens,
        "spacy_model": args.spacy_model,
        "ner_backend": args.ner_backend,
        "ner_model": args.ner_model,
        "encoder_model": args.encoder,
        "fusion_encoder": args.fusion_encoder,
        "llm_backend": "none" if args.no_llm else args.llm,
    }
    return {k: v for k, v in values.items() if v is not None} | beam_overrides(args)


def settings_file(args: argparse.Namespace) -> Path | None:
    """The settings file given with `--settings`, None for the workspace's own."""
    return Path(args.settings).expanduser() if args.settings else None
