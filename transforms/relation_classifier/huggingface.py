"""Backend for any Hugging Face sequence-classification relation model (id or local path).

KGERMAR's relation model is a BERT fine-tuned on TACRED. Such models read one sentence
with the two entities marked and output one of their own labels. For each pair this
backend:
1. cuts the context: the tokens of the pair plus `context_tokens` words either side
   (KGERMAR's "W-token window around the entity pair");
2. inserts entity markers around head and tail; `markers` are four templates that may use
   `{type}` (the KGERMAR type), to match how the model was trained: `[E1] ... [/E1]` and
   `[E2] ... [/E2]` by default, or e.g. `("@ * {type} * ", " @", "# ^ {type} ^ ", " #")` for
   typed punctuation markers;
3. runs the model in batches (CUDA when available), softmax with `temperature`;
4. maps every model label (names from `config.id2label`) onto the inventory with
   `label_map` (default: TACRED, see `transforms.relation_inventory`); the probabilities
   of labels that land on the same class add up. A reversed label (org:subsidiaries: the
   tail is part of the head) lands on the inverse class (`PartOf^-1`), which the candidate
   builder emits with head and tail swapped. Labels the map does not know go to the
   inventory's fallback (RelatedTo); labels mapped to `none` form the no-relation class.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from transforms.pair_window import token_char_spans
from transforms.relation_classifier.calibration import calibrated_probabilities
from transforms.relation_classifier.pairs import PairQuery, SegmentPairs
from transforms.relation_classifier.probe import split_rows
from transforms.relation_inventory import (
    DEFAULT_INVENTORY,
    TACRED_TO_KGERMAR,
    LabelMap,
    RelationInventory,
    directed,
)

DEFAULT_MARKERS = ("[E1] ", " [/E1]", "[E2] ", " [/E2]")
DEFAULT_CONTEXT_TOKENS = 32


def marked_context(
    text: str,
    pair: PairQuery,
    markers: Sequence[str] = DEFAULT_MARKERS,
    context_tokens: int = DEFAULT_CONTEXT_TOKENS,
) -> str:
    """The pair's context window of `text` with head and tail wrapped in `markers`."""
    types = (pair.head_type, pair.head_type, pair.tail_type, pair.tail_type)
    head_open, head_close, tail_open, tail_close = (
        marker.format(type=t) for marker, t in zip(markers, types, strict=True)
    )
    inserts = sorted(
        [
            (pair.head[0], 1, head_open),
            (pair.head[1], 0, head_close),
            (pair.tail[0], 1, tail_open),
            (pair.tail[1], 0, tail_close),
        ]
    )
    tokens = token_char_spans(text)
    lo, hi = min(pair.head[0], pair.tail[0]), max(pair.head[1], pair.tail[1])
    before = [s for s, e in tokens if e <= lo]
    after = [e for s, e in tokens if s >= hi]
    if context_tokens == 0:
        start, end = lo, hi
    else:
        start = before[-context_tokens] if len(before) >= context_tokens else 0
        end = after[context_tokens - 1] if len(after) >= context_tokens else len(text)
    pieces, cursor = [], start
    for position, _, marker in inserts:
        pieces += [text[cursor:position], marker]
        cursor = position
    pieces.append(text[cursor:end])
    return "".join(pieces).strip()


class HuggingFaceBackend:
    """`RelationBackend` over a transformers sequence-classification model."""

    def __init__(
        self,
        model: str,
        label_map: LabelMap = TACRED_TO_KGERMAR,
        inventory: RelationInventory = DEFAULT_INVENTORY,
        markers: Sequence[str] = DEFAULT_MARKERS,
        context_tokens: int = DEFAULT_CONTEXT_TOKENS,
        temperature: float = 1.0,
        batch_size: int = 32,
        max_length: int = 256,
    ) -> None:
        import torch
        import transformers
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        transformers.utils.logging.disable_progress_bar()
        self._name = model
        self._device = "cuda" if torch.cuda.is_available() else "cpu"
        self._tokenizer = AutoTokenizer.from_pretrained(model)
        self._model = AutoModelForSequenceClassification.from_pretrained(model)
        self._model.to(self._device).eval()
        self._markers = tuple(markers)
        self._context_tokens = context_tokens
        self._temperature = temperature
        self._batch_size = batch_size
        self._max_length = max_length
        self._none = inventory.none
        id2label = self._model.config.id2label
        model_labels = [id2label[i] for i in range(self._model.config.num_labels)]
        targets = [directed(*inventory.map_label(label, label_map)) for label in model_labels]
        self._classes = tuple(dict.fromkeys([inventory.none, *targets]))
        projection = np.zeros((len(model_labels), len(self._classes)), dtype=np.float64)
        for row, target in enumerate(targets):
            projection[row, self._classes.index(target)] = 1.0
        self._projection = projection
        self.model_labels = tuple(model_labels)

    @property
    def extractor(self) -> str:
        return f"classifier/hf:{self._name}"

    @property
    def classes(self) -> tuple[str, ...]:
        return self._classes

    @property
    def none_label(self) -> str:
        return self._none

    def model_probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """Calibrated probabilities over the model's own labels for marked `texts`."""
        import torch

        blocks = []
        for first in range(0, len(texts), self._batch_size):
            encoded = self._tokenizer(
                list(texts[first : first + self._batch_size]),
                truncation=True,
                max_length=self._max_length,
                padding=True,
                return_tensors="pt",
            ).to(self._device)
            with torch.inference_mode():
                blocks.append(self._model(**encoded).logits.float().cpu().numpy())
        if not blocks:
            return np.zeros((0, len(self.model_labels)))
        return calibrated_probabilities(np.vstack(blocks), self._temperature)

    def probabilities(self, items: Sequence[SegmentPairs]) -> list[np.ndarray]:
        texts = [
            marked_context(item.text, pair, self._markers, self._context_tokens)
            for item in items
            for pair in item.pairs
        ]
        return split_rows(self.model_probabilities(texts) @ self._projection, items)
