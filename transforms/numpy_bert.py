"""A sentence-transformers BERT encoder run on numpy alone: the query path's encoder.

Why: `kgmem query` embeds one short text. Importing torch, transformers and
sentence-transformers to do so costs about 6 s on these CPUs, and the forward pass of a
6-layer, 384-wide BERT over 20 tokens costs a few milliseconds in numpy. So a query
process reads the model's own files (`model.safetensors`, `tokenizer.json`, the
sentence-transformers module list) and runs the same arithmetic: word + position + token
type embeddings, LayerNorm, per layer multi-head self-attention and a GELU feed-forward,
each with its residual and LayerNorm, then the model's pooling (mean over real tokens, or
the CLS token) and, where the model declares it, L2 normalisation. The vectors equal
sentence-transformers' to float32 rounding (tests/transforms/test_numpy_bert.py).

Only models of that shape load here (`NumpyBertEncoder.supports`): a BERT-family
`config.json` (absolute positions, GELU), safetensors weights, a fast tokenizer file, and
a module list of Transformer, Pooling and optionally Normalize. Anything else (another
architecture, a model without a local directory, a prompt the model declares for queries)
is embedded by sentence-transformers as before (`transforms.embedding`). Builds embed
with `transforms.torch_bert`, which borrows these weights: batched, on CUDA where present.

GELU is the exact erf form BERT uses; erf comes from the Abramowitz-Stegun 7.1.26
rational approximation (absolute error below 1.5e-7, under float32 resolution of the
activations), because numpy has no erf and scipy.special costs more to import than the
whole encoder.

An encoding runs under `transforms.cpu_lanes`: OpenBLAS held to one thread, each layer's
work cut into two fixed lanes along the model's own independent parts, the attention heads
in two halves (each half's query, key and value projections as one product, its attention,
and its share of the output projection) and the feed-forward's intermediate units in two
halves (each half's expansion, GELU and share of the contraction), run side by side where
the caller allows two BLAS threads; the two halves' sums are added in one order. So a
question gets the same vector, bit for bit, in a graph strategy, in `dense`, ahead in an
evaluation's batch, and in any process of `--jobs` or `kgmem serve` (with OpenBLAS free
to thread, 253 of 256 LoCoMo questions got other last bits on two threads than on one).
A cut is needed for that: even one thread's products change their last bits with the
shape asked for (a column of x @ W differs as W is cut). Measured on 2 cores, 300 LoCoMo
questions: 4.5 ms a question with the lanes side by side, 6.3 ms one after the other,
against 6.3 ms for the uncut model on one OpenBLAS thread and 4.5 ms on two. The lanes'
sums differ from the uncut products by float32 rounding (under 1e-6).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from transforms.cpu_lanes import LANES, map_lanes, one_blas_thread

MODULE_TYPES = "sentence_transformers.models."
SUPPORTED_MODEL_TYPES = ("bert",)
PROJECTIONS = ("query", "key", "value")


@dataclass(frozen=True)
class _Layer:
    query_key_value: tuple[np.ndarray, np.ndarray]
    """The query, key and value projections as one (width x 3 width) product, lane by
    lane: each lane's heads' query columns, then their key and value columns, so a lane's
    projections are one view (`_Lane`) and the model is held once."""
    projection_columns: tuple[np.ndarray, np.ndarray, np.ndarray]
    """Where the query's, the key's and the value's columns lie in `query_key_value`."""
    attention_out: tuple[np.ndarray, np.ndarray]
    attention_norm: tuple[np.ndarray, np.ndarray]
    intermediate: tuple[np.ndarray, np.ndarray]
    output: tuple[np.ndarray, np.ndarray]
    output_norm: tuple[np.ndarray, np.ndarray]

    @classmethod
    def of(
        cls, projections: list[tuple[np.ndarray, np.ndarray]], heads: int, **rest: Any
    ) -> _Layer:
        """A layer from its query, key and value projections (in x out weights, biases),
        laid side by side lane by lane, and its other weights."""
        width = projections[0][0].shape[0]
        size = width // heads
        order = np.concatenate(
            [
                np.arange(which * width + own.start * size, which * width + own.stop * size)
                for own in _cuts(heads)
                for which in range(len(projections))
            ]
        )
        weights = np.concatenate([w for w, _ in projections], axis=1)[:, order]
        biases = np.concatenate([b for _, b in projections])[order]
        place = np.argsort(order)
        columns = tuple(place[which * width : (which + 1) * width] for which in range(3))
        return cls((np.ascontiguousarray(weights), biases), columns, **rest)

    def projection(self, which: int) -> tuple[np.ndarray, np.ndarray]:
        """The query (0), key (1) or value (2) projection, weights and bias (copies)."""
        columns = self.projection_columns[which]
        return self.query_key_value[0][:, columns], self.query_key_value[1][columns]


@dataclass(frozen=True)
class _Lane:
    """One lane's share of a layer, as views of the layer's weights (no copy): its heads'
    query, key and value projections as one product, its rows of the attention output
    projection, its intermediate units' expansion (columns) and its rows of the
    contraction (biases of the sums stay with the layer)."""

    heads: int
    query_key_value: tuple[np.ndarray, np.ndarray]
    attention_out: np.ndarray
    intermediate: tuple[np.ndarray, np.ndarray]
    output: np.ndarray


def _cuts(count: int) -> list[slice]:
    """`range(count)` cut into `LANES` consecutive parts."""
    return [slice(int(p[0]), int(p[-1]) + 1) for p in np.array_split(np.arange(count), LANES)]


def _lanes(layer: _Layer, heads: int) -> tuple[_Lane, ...]:
    """`layer` cut into `LANES` lanes along its heads and its intermediate units."""
    width, inner = layer.intermediate[0].shape
    size = width // heads
    lanes, start = [], 0
    for own, units in zip(_cuts(heads), _cuts(inner), strict=True):
        columns = slice(own.start * size, own.stop * size)
        fused = slice(start, start + 3 * (columns.stop - columns.start))
        start = fused.stop
        lanes.append(
            _Lane(
                heads=own.stop - own.start,
                query_key_value=(
                    layer.query_key_value[0][:, fused],
                    layer.query_key_value[1][fused],
                ),
                attention_out=layer.attention_out[0][columns],
                intermediate=(layer.intermediate[0][:, units], layer.intermediate[1][units]),
                output=layer.output[0][units],
            )
        )
    return tuple(lanes)


class NumpyBertEncoder:
    """A local sentence-transformers BERT model, embedded with numpy (see module doc)."""

    def __init__(self, directory: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        shape = _model_shape(directory)
        if shape is None:
            raise ValueError(f"{directory} is not a BERT sentence-transformers model")
        config, pooling, self.normalize, max_length = shape
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.mean_pooling = bool(pooling.get("pooling_mode_mean_tokens"))
        weights = load_file(str(directory / "model.safetensors"))
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""

        def get(name: str) -> np.ndarray:
            return weights[f"{prefix}{name}"].astype(np.float32)

        def dense(name: str) -> tuple[np.ndarray, np.ndarray]:
            return np.ascontiguousarray(get(f"{name}.weight").T), get(f"{name}.bias")

        def norm(name: str) -> tuple[np.ndarray, np.ndarray]:
            return get(f"{name}.weight"), get(f"{name}.bias")

        self.words = get("embeddings.word_embeddings.weight")
        self.positions = get("embeddings.position_embeddings.weight")
        self.token_types = get("embeddings.token_type_embeddings.weight")
        self.embedding_norm = norm("embeddings.LayerNorm")
        self.layers = [
            _Layer.of(
                [dense(f"encoder.layer.{i}.attention.self.{name}") for name in PROJECTIONS],
                self.heads,
                attention_out=dense(f"encoder.layer.{i}.attention.output.dense"),
                attention_norm=norm(f"encoder.layer.{i}.attention.output.LayerNorm"),
                intermediate=dense(f"encoder.layer.{i}.intermediate.dense"),
                output=dense(f"encoder.layer.{i}.output.dense"),
                output_norm=norm(f"encoder.layer.{i}.output.LayerNorm"),
            )
            for i in range(int(config["num_hidden_layers"]))
        ]
        self.lanes = [_lanes(layer, self.heads) for layer in self.layers]
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        self.tokenizer.enable_truncation(min(max_length, self.positions.shape[0]))
        self.tokenizer.no_padding()
        self.dim = self.words.shape[1]

    @staticmethod
    def supports(directory: Path) -> bool:
        """Whether `directory` holds a model this encoder runs (see the module doc)."""
        return _model_shape(directory) is not None

    def encode(self, texts: list[str]) -> np.ndarray:
        """float32 sentence vectors of `texts` (one row each), as sentence-transformers',
        the same bits under any caller's thread limit (see the module doc)."""
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        with one_blas_thread():
            for row, encoding in enumerate(self.tokenizer.encode_batch(texts)):
                ids, types = np.asarray(encoding.ids), np.asarray(encoding.type_ids)
                vectors[row] = self._sentence(ids, types)
        if self.normalize:
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors /= np.where(norms > 0, norms, 1.0)
        return vectors

    def _sentence(self, ids: np.ndarray, types: np.ndarray) -> np.ndarray:
        hidden = self.words[ids] + self.positions[: len(ids)] + self.token_types[types]
        hidden = _layer_norm(hidden, *self.embedding_norm, self.eps)
        for layer, lanes in zip(self.layers, self.lanes, strict=True):
            attended = _summed(self._attention, hidden, lanes)
            hidden = _layer_norm(
                hidden + attended + layer.attention_out[1], *layer.attention_norm, self.eps
            )
            expanded = _summed(_feed_forward, hidden, lanes)
            hidden = _layer_norm(hidden + expanded + layer.output[1], *layer.output_norm, self.eps)
        return hidden.mean(axis=0) if self.mean_pooling else hidden[0]

    def _attention(self, hidden: np.ndarray, lane: _Lane) -> np.ndarray:
        """`lane`'s heads' attention, through its rows of the output projection."""
        tokens, width = hidden.shape
        size = width // self.heads
        projected = _affine(hidden, *lane.query_key_value)
        q, k, v = projected.reshape(tokens, 3, lane.heads, size).transpose(1, 2, 0, 3)
        scores = q @ k.transpose(0, 2, 1) / np.float32(np.sqrt(size))
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        attended = (scores @ v).transpose(1, 0, 2).reshape(tokens, lane.heads * size)
        return attended @ lane.attention_out


def _feed_forward(hidden: np.ndarray, lane: _Lane) -> np.ndarray:
    """`lane`'s intermediate units: expansion, GELU, and its rows of the contraction."""
    return _gelu(_affine(hidden, *lane.intermediate)) @ lane.output


def _summed(
    part: Callable[[np.ndarray, _Lane], np.ndarray], hidden: np.ndarray, lanes: tuple[_Lane, ...]
) -> np.ndarray:
    """The sum of `part` over `lanes` (`cpu_lanes.map_lanes`), added in lane order."""
    first, *others = map_lanes(lambda lane: part(hidden, lane), lanes)
    return sum(others, first)


@functools.cache
def numpy_encoder(directory: str) -> NumpyBertEncoder:
    """The encoder of `directory`, loaded once per process."""
    return NumpyBertEncoder(Path(directory))


def _model_shape(directory: Path) -> tuple[dict, dict, bool, int] | None:
    """(config, pooling config, normalises, max tokens) when `directory` is a local
    sentence-transformers BERT model with safetensors weights and a fast tokenizer file,
    mean or CLS pooling and no query prompt; else None."""
    files = ("modules.json", "config.json", "model.safetensors", "tokenizer.json")
    if not all((directory / name).is_file() for name in files):
        return None
    listed = _json(directory / "modules.json")
    modules = [m["type"].removeprefix(MODULE_TYPES) for m in listed]
    if modules not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        return None
    config = _json(directory / "config.json")
    if (
        config.get("model_type") not in SUPPORTED_MODEL_TYPES
        or config.get("hidden_act") != "gelu"
        or config.get("position_embedding_type", "absolute") != "absolute"
    ):
        return None
    pooling_config = directory / listed[1]["path"] / "config.json"
    pooling = _json(pooling_config) if pooling_config.is_file() else {}
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode_") and v}
    if modes not in ({"pooling_mode_mean_tokens"}, {"pooling_mode_cls_token"}):
        return None
    st_config = directory / "config_sentence_transformers.json"
    if st_config.is_file() and _json(st_config).get("prompts", {}).get("query"):
        return None
    bert_config = directory / "sentence_bert_config.json"
    max_length = (
        int(_json(bert_config).get("max_seq_length", 512)) if bert_config.is_file() else 512
    )
    return config, pooling, modules[-1] == "Normalize", max_length


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _affine(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    return x @ weight + bias


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * weight + bias


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.float32(np.sqrt(2.0))))


def _erf(x: np.ndarray) -> np.ndarray:
    """erf by Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7)."""
    sign = np.sign(x)
    a = np.abs(x).astype(np.float64)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return (sign * (1.0 - poly * np.exp(-a * a))).astype(np.float32)
