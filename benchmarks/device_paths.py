"""Throughput of the build's accelerated paths on CUDA, as ratios to the CPU in this process.

Three paths run on a GPU when one is present, and each is measured on the CPU and then on
CUDA, on the same inputs in the same process:

- `encoder`: the build's batched sentence encoder (`transforms.torch_bert`), which embeds
  every stored text (passages, statements, entity names and contexts); texts/s.
- `ner`: a Hugging Face token classifier with the NER stage's windowing and span
  aggregation (`transforms.token_classifier`); texts/s. Any model id or local path; the
  default is the `hf` backend's model, which needs a hub or a local copy.
- `rgcn`: KGERMAR's R-GCN training (`transforms.rgcn`) on a seeded random multigraph with
  random unit text features; epochs/s. On the CPU it uses every core, with deterministic
  algorithms on, as `graph_embeddings` does when given more than one thread.

Each row also says how far CUDA's output is from the CPU's on the inputs both ran, so a
speed-up that changed the answers shows: the largest absolute difference of the encoder's
vectors and of the R-GCN's fused embeddings, and the share of NER texts whose spans are
identical. The CPU runs on `cpu_texts` texts (fewer than CUDA's `texts`, since it is far
slower); throughput is per second, so the two stay comparable.

The inputs are the synthetic collection of `kgmem bench build` (`benchmarks.corpus_generator`:
documents of 60-200 words). Without CUDA the CPU figures are still measured and the CUDA
columns are empty, with the reason. Runs where Apache Beam is not installed
(`python -m benchmarks.device_paths --help`), so it can be carried to a GPU machine.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.corpus_generator import CorpusGenerator

DEFAULT_TEXTS = 2048
DEFAULT_CPU_TEXTS = 256
DEFAULT_RGCN_ENTITIES = 50_000
DEFAULT_RGCN_FACTS = 200_000
DEFAULT_RGCN_RELATIONS = 24
DEFAULT_RGCN_EPOCHS = 10
DEFAULT_RGCN = (
    DEFAULT_RGCN_ENTITIES,
    DEFAULT_RGCN_FACTS,
    DEFAULT_RGCN_RELATIONS,
    DEFAULT_RGCN_EPOCHS,
)
RGCN_HELP = "R-GCN graph and run: entities,facts,relation types,epochs"
TEXT_WIDTH = 384
"""Width of the R-GCN's random text features: the packaged encoder's."""


@dataclass
class PathResult:
    """One path's CPU and CUDA throughput (`unit` per second), their ratio, and how far
    CUDA's output is from the CPU's (`parity`, described by `parity_measure`)."""

    path: str
    model: str
    unit: str
    cpu_items: int
    cpu_per_s: float | None = None
    cuda_items: int = 0
    cuda_per_s: float | None = None
    parity: float | None = None
    parity_measure: str = ""
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """CUDA throughput over the CPU's, or None when either is missing."""
        if self.cpu_per_s and self.cuda_per_s:
            return self.cuda_per_s / self.cpu_per_s
        return None

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio}


@dataclass
class DeviceReport:
    """The machine the paths ran on and one result per path."""

    cuda_device: str | None
    cpu_threads: int
    torch_version: str
    paths: list[PathResult] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "paths": [p.as_dict() for p in self.paths]}


def benchmark_texts(count: int, seed: int = 0) -> list[str]:
    """The bodies of `count` generated documents (the build benchmark's collection)."""
    return [d.body for d in CorpusGenerator(seed).documents(range(count))]


def timed(work: Callable[[], Any], device: str) -> tuple[Any, float]:
    """`work()`'s result and wall seconds, with CUDA's queued kernels finished inside."""
    import torch

    started = time.perf_counter()
    result = work()
    if device == "cuda":
        torch.cuda.synchronize()
    return result, time.perf_counter() - started


def measure_encoder(
    directory: str, texts: Sequence[str], cpu_texts: int, devices: Sequence[str]
) -> PathResult:
    """`transforms.torch_bert` on the CPU and on CUDA: texts/s and the largest |difference|
    of the vectors both computed."""
    from transforms.torch_bert import TorchBertEncoder

    result = PathResult("encoder", directory, "texts", cpu_items=cpu_texts)
    vectors: dict[str, np.ndarray] = {}
    for device in devices:
        encoder = TorchBertEncoder(directory, device)
        batch = texts[:cpu_texts] if device == "cpu" else texts
        encoder.encode(batch[:64])  # warm-up: kernels, allocator
        out, seconds = timed(lambda e=encoder, b=batch: e.encode(b), device)
        vectors[device] = out[:cpu_texts]
        _record(result, device, len(batch), len(batch) / seconds)
    if len(vectors) == 2:
        result.parity = float(np.abs(vectors["cpu"] - vectors["cuda"]).max())
        result.parity_measure = "max |CPU - CUDA| of a vector component"
    return result


def measure_ner(
    model: str, texts: Sequence[str], cpu_texts: int, devices: Sequence[str]
) -> PathResult:
    """`transforms.token_classifier` on the CPU and on CUDA: texts/s and the share of texts
    whose spans are the same on both."""
    from transforms.token_classifier import load_token_classifier, predict_spans

    result = PathResult("ner", model, "texts", cpu_items=cpu_texts)
    spans: dict[str, list] = {}
    for device in devices:
        classifier = load_token_classifier(model, device)
        batch = list(texts[:cpu_texts] if device == "cpu" else texts)
        predict_spans(classifier, batch[:16])
        out, seconds = timed(lambda c=classifier, b=batch: predict_spans(c, b), device)
        spans[device] = out[:cpu_texts]
        _record(result, device, len(batch), len(batch) / seconds)
    if len(spans) == 2:
        same = sum(a == b for a, b in zip(spans["cpu"], spans["cuda"], strict=True))
        result.parity = same / max(cpu_texts, 1)
        result.parity_measure = "share of texts with identical spans on CPU and CUDA"
    return result


def random_graph(
    entities: int, facts: int, relations: int, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Heads, relation types and tails of `facts` random facts (heads skewed towards low
    indices, as hubs are), and unit random text features of the entities."""
    rng = np.random.default_rng(seed)
    heads = np.minimum((rng.pareto(1.5, facts) * entities / 20).astype(np.int64), entities - 1)
    tails = rng.integers(0, entities, facts)
    kinds = rng.integers(0, relations, facts)
    text = rng.standard_normal((entities, TEXT_WIDTH)).astype(np.float32)
    text /= np.linalg.norm(text, axis=1, keepdims=True)
    return heads, kinds, tails, text


def measure_rgcn(
    entities: int, facts: int, relations: int, epochs: int, devices: Sequence[str]
) -> PathResult:
    """`transforms.rgcn.train_rgcn` on the CPU (every core) and on CUDA: epochs/s and the
    largest |difference| of the fused embeddings."""
    from transforms.rgcn import RGCNConfig, train_rgcn

    heads, kinds, tails, text = random_graph(entities, facts, relations)
    label = f"R-GCN, {entities:,} entities, {facts:,} facts, {relations} relation types"
    result = PathResult("rgcn", label, "epochs", cpu_items=epochs)
    fused: dict[str, np.ndarray] = {}
    for device in devices:
        config = RGCNConfig(epochs=epochs, device=device, threads=os.cpu_count() or 1)
        train_rgcn(heads[:1000], kinds[:1000], tails[:1000], entities, text, config, relations,
                   epochs=1)  # fmt: skip
        trained, seconds = timed(
            lambda c=config: train_rgcn(heads, kinds, tails, entities, text, c, relations),
            device,
        )
        fused[device] = trained.fused
        _record(result, device, epochs, epochs / seconds)
    if len(fused) == 2:
        result.parity = float(np.abs(fused["cpu"] - fused["cuda"]).max())
        result.parity_measure = "max |CPU - CUDA| of a fused-embedding component"
    return result


def _record(result: PathResult, device: str, items: int, per_s: float) -> None:
    if device == "cpu":
        result.cpu_per_s = per_s
    else:
        result.cuda_items, result.cuda_per_s = items, per_s


def run(
    encoder: str,
    ner_model: str,
    texts: int = DEFAULT_TEXTS,
    cpu_texts: int = DEFAULT_CPU_TEXTS,
    rgcn: tuple[int, int, int, int] = DEFAULT_RGCN,
    on_step: Callable[[str], None] = print,
) -> DeviceReport:
    """Measure the three paths (see the module docstring); a path that fails (a model that
    cannot be loaded, say) gets its error as the note and the others still run."""
    import torch

    if cpu_texts < 1 or texts < cpu_texts:
        raise ValueError(f"need 1 <= cpu_texts <= texts, not {cpu_texts} and {texts}")
    cuda = torch.cuda.is_available()
    devices = ("cpu", "cuda") if cuda else ("cpu",)
    report = DeviceReport(
        torch.cuda.get_device_name(0) if cuda else None, os.cpu_count() or 1, torch.__version__
    )
    corpus = benchmark_texts(texts)
    steps: list[tuple[str, str, str, Callable[[], PathResult]]] = [
        ("encoder", encoder, "texts",
         lambda: measure_encoder(encoder, corpus, cpu_texts, devices)),
        ("ner", ner_model, "texts", lambda: measure_ner(ner_model, corpus, cpu_texts, devices)),
        ("rgcn", "R-GCN", "epochs", lambda: measure_rgcn(*rgcn, devices)),
    ]  # fmt: skip
    for path, model, unit, measure in steps:
        on_step(f"{path}: {model} on {' and '.join(devices)}")
        try:
            result = measure()
        except Exception as error:  # one path's failure is reported, the others still run
            result = PathResult(path, model, unit, cpu_items=0, note=f"failed: {error}")
        if not cuda and not result.note:
            result.note = "no CUDA device: CPU only"
        report.paths.append(result)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Command line where the kgmem CLI is not installed (a GPU machine): prints the rows
    and writes the report as JSON."""
    from transforms.embedding import DEFAULT_ENCODER, resolve_model_path
    from transforms.ner_backends import DEFAULT_HF_NER_MODEL

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoder", help="local sentence-transformers BERT directory "
                        "(default: the packaged MiniLM)")  # fmt: skip
    parser.add_argument("--ner-model", default=DEFAULT_HF_NER_MODEL)
    parser.add_argument("--texts", type=int, default=DEFAULT_TEXTS)
    parser.add_argument("--cpu-texts", type=int, default=DEFAULT_CPU_TEXTS)
    parser.add_argument("--rgcn", default=",".join(map(str, DEFAULT_RGCN)), help=RGCN_HELP)
    parser.add_argument("--json-out", default="bench_device.json")
    args = parser.parse_args(argv)
    report = run(
        args.encoder or resolve_model_path(DEFAULT_ENCODER),
        args.ner_model,
        args.texts,
        args.cpu_texts,
        parse_rgcn(args.rgcn),
    )
    Path(args.json_out).write_text(json.dumps(report.as_dict(), indent=2))
    print(json.dumps(report.as_dict(), indent=2))
    return 0


def parse_rgcn(value: str) -> tuple[int, int, int, int]:
    """'entities,facts,relations,epochs' as four positive integers."""
    parts = value.split(",")
    try:
        numbers = tuple(int(p) for p in parts)
    except ValueError:
        numbers = ()
    if len(numbers) != 4 or min(numbers) < 1:
        raise ValueError(f"--rgcn takes four positive integers, not {value!r}")
    return numbers  # type: ignore[return-value]


if __name__ == "__main__":
    raise SystemExit(main())
