"""NER with any Hugging Face token-classification model: its Beam `ModelHandler`.

`apache_beam.ml.inference.huggingface_inference` imports TensorFlow and fails without it,
so `HfNerModelHandler` is a small handler of its own around `transforms.token_classifier`:
the model is loaded once per worker in `load_model` (on CUDA when available, else CPU) and
Beam's `RunInference` hands it batches of segment texts (wrap it in `KeyedModelHandler` to
carry the segment rows along).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from apache_beam.ml.inference.base import ModelHandler, PredictionResult

from transforms.ner_backends import HF_BACKEND
from transforms.token_classifier import TokenClassifier, load_token_classifier, predict_spans


class HfNerModelHandler(ModelHandler[str, PredictionResult, TokenClassifier]):
    """Beam model handler: segment texts in, `PredictionResult(text, list[EntitySpan])` out.

    Batch bounds go to `RunInference`'s `BatchElements` where it batches (the NER stage hands
    it whole batches instead, `with_no_batching`); `max_batch_size` also bounds the windows
    per forward pass. `model_tag` (`hf:<model>`) is each result's `model_id`.
    """

    def __init__(
        self,
        model: str,
        *,
        device: str = "auto",
        min_batch_size: int = 16,
        max_batch_size: int = 64,
        max_length: int = 512,
        stride: int = 128,
    ) -> None:
        super().__init__(min_batch_size=min_batch_size, max_batch_size=max_batch_size)
        self._model = model
        self._device = device
        self._max_batch_size = max_batch_size
        self._max_length = max_length
        self._stride = stride
        self.model_tag = f"{HF_BACKEND}:{model}"

    def load_model(self) -> TokenClassifier:
        return load_token_classifier(self._model, self._device, self._max_length)

    def run_inference(
        self,
        batch: Sequence[str],
        model: TokenClassifier,
        inference_args: dict[str, Any] | None = None,
    ) -> Iterable[PredictionResult]:
        spans = predict_spans(model, batch, self._stride, self._max_batch_size)
        return [
            PredictionResult(text, found, self.model_tag)
            for text, found in zip(batch, spans, strict=True)
        ]

    def get_metrics_namespace(self) -> str:
        return "HfNer"
