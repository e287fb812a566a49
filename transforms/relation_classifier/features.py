"""Pair features from one pass of a sentence encoder over each segment.

The encoder (the packaged all-MiniLM-L6-v2 by default, any Hugging Face encoder id or
path otherwise) reads each segment once; every pair of the segment is then described by
pooling the contextual token states, as document-level RE models such as ATLOP do:

    [ head ; tail ; head * tail ; between ; segment ; type(head) ; type(tail) ; geometry ]

`head` / `tail`: mean of the word pieces overlapping the mention; `between`: mean of the
pieces strictly between the two mentions (zeros when adjacent); `segment`: mean of all
pieces; types: one-hots over the KGERMAR types plus Value; geometry: log(1 + token
distance) and whether the head comes first (direction). Encoding once per segment instead
of once per marked-up pair ("[H] ... [/H] ... [T] ... [/T]") makes the cost independent of
the number of pairs (about 150 per Re-DocRED document at W = 50 in 128-token chunks). Pieces beyond
`max_length` are truncated; a mention there pools to zeros.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from transforms.embedding import DEFAULT_ENCODER, resolve_model_path
from transforms.entity_types import KGERMAR_TYPES, VALUE_TYPE
from transforms.relation_classifier.pairs import PairQuery, SegmentPairs

ENTITY_TYPES = (*KGERMAR_TYPES, VALUE_TYPE)
DEFAULT_MAX_LENGTH = 256


@functools.cache
def load_encoder(model: str = DEFAULT_ENCODER):  # noqa: ANN201 (tokenizer, model, device)
    """(fast tokenizer, encoder in eval mode, device) for `model`, once per process."""
    import torch
    import transformers
    from transformers import AutoModel, AutoTokenizer

    transformers.utils.logging.disable_progress_bar()
    path = resolve_model_path(model)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    encoder = AutoModel.from_pretrained(path).to(device).eval()
    return AutoTokenizer.from_pretrained(path), encoder, device


def _span_mask(offsets: np.ndarray, start: int, end: int) -> np.ndarray:
    return (offsets[:, 0] < end) & (offsets[:, 1] > start) & (offsets[:, 1] > offsets[:, 0])


def _mean_rows(masks: np.ndarray, states: np.ndarray) -> np.ndarray:
    counts = masks.sum(axis=1, keepdims=True)
    return (masks @ states) / np.maximum(counts, 1)


def _geometry(pair: PairQuery) -> list[float]:
    onehots = [float(pair.head_type == t) for t in ENTITY_TYPES]
    onehots += [float(pair.tail_type == t) for t in ENTITY_TYPES]
    return [*onehots, float(np.log1p(pair.distance)), float(pair.head[0] < pair.tail[0])]


def pair_block(states: np.ndarray, offsets: np.ndarray, pairs: Sequence[PairQuery]) -> np.ndarray:
    """Feature rows of `pairs` from one segment's token `states` and char `offsets`."""
    words = offsets[:, 1] > offsets[:, 0]
    head = np.stack([_span_mask(offsets, *p.head) for p in pairs]).astype(np.float32)
    tail = np.stack([_span_mask(offsets, *p.tail) for p in pairs]).astype(np.float32)
    between = np.stack(
        [
            words
            & (offsets[:, 0] >= min(p.head[1], p.tail[1]))
            & (offsets[:, 1] <= max(p.head[0], p.tail[0]))
            for p in pairs
        ]
    ).astype(np.float32)
    h, t = _mean_rows(head, states), _mean_rows(tail, states)
    segment = np.broadcast_to(states[words].mean(axis=0), h.shape)
    geometry = np.asarray([_geometry(p) for p in pairs], dtype=np.float32)
    return np.hstack([h, t, h * t, _mean_rows(between, states), segment, geometry])


def pair_features(
    items: Sequence[SegmentPairs],
    model: str = DEFAULT_ENCODER,
    batch_size: int = 32,
    max_length: int = DEFAULT_MAX_LENGTH,
) -> np.ndarray:
    """Feature matrix of every pair of `items`, in item then pair order."""
    import torch

    tokenizer, encoder, device = load_encoder(model)
    blocks: list[np.ndarray] = []
    todo = [item for item in items if item.pairs]
    for first in range(0, len(todo), batch_size):
        batch = todo[first : first + batch_size]
        encoded = tokenizer(
            [item.text for item in batch],
            return_offsets_mapping=True,
            truncation=True,
            max_length=max_length,
            padding=True,
            return_tensors="pt",
        )
        offsets = encoded.pop("offset_mapping").numpy()
        with torch.inference_mode():
            states = encoder(**encoded.to(device)).last_hidden_state.float().cpu().numpy()
        for row, item in enumerate(batch):
            blocks.append(pair_block(states[row], offsets[row], item.pairs))
    if not blocks:
        return np.zeros((0, feature_width(encoder.config.hidden_size)), dtype=np.float32)
    return np.vstack(blocks).astype(np.float32)


def feature_width(hidden_size: int) -> int:
    """Width of a feature row for an encoder with `hidden_size`."""
    return 5 * hidden_size + 2 * len(ENTITY_TYPES) + 2
