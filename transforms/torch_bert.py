"""A sentence-transformers BERT encoder run on torch alone: the build's batched encoder.

Why: the build embeds every stored text (passages, statements, entity names and entity
contexts) in batches. sentence-transformers did that, and importing it costs about 5 s
per build process on these CPUs on top of torch (it loads transformers' model machinery,
torch._dynamo, torch.distributed.tensor, sympy and scikit-learn), for one forward pass of
a 6-layer BERT. The build imports torch anyway (the R-GCN), so this module runs the same
arithmetic as `transforms.numpy_bert` (whose weights it borrows, loaded once per process)
as batched torch operations: padded batches in length order, a boolean attention mask in
`scaled_dot_product_attention`, exact-erf GELU, then the model's pooling over the real
tokens and, where the model declares it, L2 normalisation. On CUDA the tensors move to
the GPU. The vectors equal sentence-transformers' to float32 rounding
(tests/transforms/test_torch_bert.py).

The token states with their character offsets are exposed too (`token_batches`), for the
span pooling of entity contexts (`transforms.entity_contexts`).

Only the models `NumpyBertEncoder.supports` load here; any other model keeps
sentence-transformers (`transforms.embedding`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from transforms.numpy_bert import PROJECTIONS, numpy_encoder

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class TokenBatch:
    """One padded batch: its texts' positions in the input, their last hidden states
    (batch x tokens x width, float32), which tokens are real, and each token's character
    span in its text ((0, 0) for the special tokens and the padding)."""

    rows: list[int]
    states: np.ndarray
    mask: np.ndarray
    offsets: np.ndarray


class TorchBertEncoder:
    """A local sentence-transformers BERT model, embedded with torch (see module doc)."""

    def __init__(self, directory: str, device: str) -> None:
        import torch

        weights = numpy_encoder(directory)
        self.device = device
        self.heads, self.eps, self.dim = weights.heads, weights.eps, weights.dim
        self.mean_pooling, self.normalize = weights.mean_pooling, weights.normalize
        self.tokenizer = weights.tokenizer

        def tensor(array: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(array)).to(device)

        def pair(arrays: tuple[np.ndarray, np.ndarray]) -> tuple[torch.Tensor, torch.Tensor]:
            return tensor(arrays[0]), tensor(arrays[1])

        self.words, self.positions = tensor(weights.words), tensor(weights.positions)
        self.token_types = tensor(weights.token_types)
        self.embedding_norm = pair(weights.embedding_norm)
        held = ("attention_out", "attention_norm", "intermediate", "output", "output_norm")
        self.layers = [
            {name: pair(getattr(layer, name)) for name in held}
            | {name: pair(layer.projection(i)) for i, name in enumerate(PROJECTIONS)}
            for layer in weights.layers
        ]

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """float32 sentence vectors of `texts` (one row each), as sentence-transformers'.

        The model's pooling (and L2 normalisation) runs where the model ran, so only one
        vector per text leaves the device: on an H200, copying every token state to the
        CPU and pooling there held the encoder to 4,068 texts/s, pooling on the GPU gave
        7,029 (8,192 texts of 60-200 words, batches of 64; vectors within 1.8e-7)."""
        import torch
        from torch.nn import functional as F

        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for rows, ids, types, mask, _ in self._padded_batches(texts, batch_size):
            with torch.inference_mode():
                states, real = self._states(ids, types, mask)
                if self.mean_pooling:
                    weights = real[:, :, None].float()
                    pooled = (states * weights).sum(dim=1) / weights.sum(dim=1)
                else:
                    pooled = states[:, 0]
                if self.normalize:
                    pooled = F.normalize(pooled, dim=1)
            vectors[rows] = pooled.cpu().numpy()
        return vectors

    def token_batches(self, texts: Sequence[str], batch_size: int = 64) -> Iterator[TokenBatch]:
        """The last hidden states of `texts`, in padded batches of similar length."""
        import torch

        for rows, ids, types, mask, offsets in self._padded_batches(texts, batch_size):
            with torch.inference_mode():
                states, _ = self._states(ids, types, mask)
            yield TokenBatch(rows, states.cpu().numpy(), mask, offsets)

    def _states(
        self, ids: np.ndarray, types: np.ndarray, mask: np.ndarray
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The last hidden states (float32, on the model's device) of one padded batch, and
        its real-token mask moved there."""
        import torch

        real = torch.from_numpy(mask).to(self.device)
        ids_on, types_on = (torch.from_numpy(a).to(self.device) for a in (ids, types))
        return self._forward(ids_on, types_on, real).float(), real

    def _padded_batches(
        self, texts: Sequence[str], batch_size: int
    ) -> Iterator[tuple[list[int], np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """(rows, token ids, token types, real-token mask, character offsets) of `texts`
        in batches of similar length, each padded to its longest."""
        encodings = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for first in range(0, len(order), batch_size):
            rows = order[first : first + batch_size]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            types = np.zeros_like(ids)
            offsets = np.zeros((len(rows), width, 2), dtype=np.int64)
            mask = np.zeros(ids.shape, dtype=bool)
            for j, i in enumerate(rows):
                n = len(encodings[i].ids)
                ids[j, :n], types[j, :n] = encodings[i].ids, encodings[i].type_ids
                offsets[j, :n], mask[j, :n] = encodings[i].offsets, True
            yield rows, ids, types, mask, offsets

    def _forward(self, ids: torch.Tensor, types: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        from torch.nn import functional as F

        width = self.words.shape[1]
        hidden = self.words[ids] + self.positions[: ids.shape[1]] + self.token_types[types]
        hidden = F.layer_norm(hidden, (width,), *self.embedding_norm, self.eps)
        attend = mask[:, None, None, :]
        for layer in self.layers:
            attended = self._attention(hidden, layer, attend) @ layer["attention_out"][0]
            attended = attended + layer["attention_out"][1]
            hidden = F.layer_norm(hidden + attended, (width,), *layer["attention_norm"], self.eps)
            expanded = F.gelu(hidden @ layer["intermediate"][0] + layer["intermediate"][1])
            output = expanded @ layer["output"][0] + layer["output"][1]
            hidden = F.layer_norm(hidden + output, (width,), *layer["output_norm"], self.eps)
        return hidden

    def _attention(self, hidden: torch.Tensor, layer: dict, attend: torch.Tensor) -> torch.Tensor:
        from torch.nn import functional as F

        batch, tokens, width = hidden.shape
        size = width // self.heads

        def heads(name: str) -> torch.Tensor:
            weight, bias = layer[name]
            projected = hidden @ weight + bias
            return projected.view(batch, tokens, self.heads, size).transpose(1, 2)

        out = F.scaled_dot_product_attention(
            heads("query"), heads("key"), heads("value"), attn_mask=attend
        )
        return out.transpose(1, 2).reshape(batch, tokens, width)


@functools.cache
def torch_encoder(directory: str) -> TorchBertEncoder:
    """The encoder of `directory`, loaded once per process (on CUDA when present)."""
    import torch

    return TorchBertEncoder(directory, "cuda" if torch.cuda.is_available() else "cpu")
