"""Token classification with any Hugging Face model: loading, long texts in windows, and
word pieces aggregated to entity spans, on CUDA when available.

Long texts are never cut: the tokenizer splits a text longer than the model's window into
overlapping windows (truncation with stride, `return_overflowing_tokens`), and each word
piece takes its label from the window in which it has the most context on both sides.
Pieces are aligned to the text through the tokenizer's offset mapping, so only fast
(Rust) tokenizers are supported; labels are aggregated to spans by `transforms.token_spans`.

Why a module of its own: the model logic needs torch and transformers only, so it runs
(and is benchmarked, `benchmarks.device_paths`) where Apache Beam is not installed; the
Beam handler around it is `transforms.hf_ner`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from transforms.ner_backends import DEVICES
from transforms.token_spans import EntitySpan, WordPiece, aggregate_entities


def resolve_device(device: str) -> torch.device:
    """`auto` -> CUDA when available, else CPU; `cuda` fails clearly when it is absent."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, not {device!r}")
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' was asked for but torch sees no CUDA device")
    return torch.device(device)


@dataclass
class TokenClassifier:
    """A loaded token-classification model with its fast tokenizer, device, label names
    and the longest window (in tokens) it takes."""

    tokenizer: Any  # PreTrainedTokenizerFast
    model: torch.nn.Module
    device: torch.device
    labels: dict[int, str]
    max_length: int


def load_token_classifier(
    model: str, device: str = "auto", max_length: int = 512
) -> TokenClassifier:
    """Load `model` (hub id or local path) for inference; windows are at most `max_length`
    tokens, fewer if the model's position embeddings or tokenizer allow fewer."""
    import transformers
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    transformers.utils.logging.disable_progress_bar()
    tokenizer = AutoTokenizer.from_pretrained(model)
    if not tokenizer.is_fast:
        raise ValueError(
            f"the tokenizer of {model!r} is a slow (Python) tokenizer; NER needs a fast "
            "tokenizer for char offsets: save one with tokenizer.json beside the model"
        )
    target = resolve_device(device)
    network = AutoModelForTokenClassification.from_pretrained(model).to(target).eval()
    limits = [max_length, tokenizer.model_max_length]
    limits.append(getattr(network.config, "max_position_embeddings", max_length))
    return TokenClassifier(
        tokenizer, network, target, dict(network.config.id2label), int(min(limits))
    )


def predict_spans(
    classifier: TokenClassifier, texts: Sequence[str], stride: int = 128, window_batch: int = 64
) -> list[list[EntitySpan]]:
    """Entity spans of each text, running at most `window_batch` windows per forward pass;
    consecutive windows of a long text overlap by `stride` tokens (at most half a window)."""
    encoding = classifier.tokenizer(
        list(texts),
        truncation=True,
        max_length=classifier.max_length,
        stride=min(stride, classifier.max_length // 2),
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        padding=True,
        return_tensors="pt",
    )
    window_texts = encoding.pop("overflow_to_sample_mapping").tolist()
    offsets = encoding.pop("offset_mapping").tolist()
    label_ids = _label_ids(classifier, encoding, window_batch)
    best: list[dict[int, tuple[int, WordPiece]]] = [{} for _ in texts]
    for window, text_index in enumerate(window_texts):
        word_ids = encoding.word_ids(window)
        positions = [j for j, word in enumerate(word_ids) if word is not None]
        for rank, j in enumerate(positions):
            start, end = offsets[window][j]
            if start >= end:
                continue
            context = min(rank, len(positions) - 1 - rank)
            kept = best[text_index].get(start)
            if kept is None or context > kept[0]:
                label = classifier.labels[label_ids[window][j]]
                best[text_index][start] = (context, WordPiece(start, end, word_ids[j], label))
    return [
        aggregate_entities(text, [piece for _, piece in sorted(pieces.values(), key=_offset)])
        for text, pieces in zip(texts, best, strict=True)
    ]


def _offset(kept: tuple[int, WordPiece]) -> int:
    return kept[1].start


def _label_ids(classifier: TokenClassifier, encoding: Any, window_batch: int) -> list[list[int]]:
    """Arg-max label id of every token of every window, `window_batch` windows at a time."""
    rows: list[list[int]] = []
    total = len(encoding["input_ids"])
    with torch.inference_mode():
        for first in range(0, total, window_batch):
            inputs = {
                name: tensor[first : first + window_batch].to(classifier.device)
                for name, tensor in encoding.items()
            }
            rows.extend(classifier.model(**inputs).logits.argmax(-1).cpu().tolist())
    return rows
