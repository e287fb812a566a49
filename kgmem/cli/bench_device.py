"""`kgmem bench device`: the options and the table of `benchmarks.device_paths`.

    kgmem bench device [--encoder DIR] [--ner-model ID|PATH] [--texts 2048] [--cpu-texts 256]
                       [--rgcn ENTITIES,FACTS,RELATIONS,EPOCHS] [--json-out bench_device.json]

The build's accelerated paths (the batched sentence encoder, Hugging Face NER, the R-GCN)
each run on the CPU and then on CUDA in this process: throughput, the CUDA/CPU ratio, and
how far CUDA's output is from the CPU's. Without CUDA only the CPU is measured. The same
benchmark runs without the kgmem CLI (`python -m benchmarks.device_paths`), for machines
where only torch and transformers are installed. The exit status is 1 when a path failed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from kgmem.cli.common import console, out

DEFAULT_JSON = "bench_device.json"


def add_arguments(bench: argparse.ArgumentParser) -> None:
    """The suite's own options; remembers the shared `--json-out` default so that `run`
    can tell it from a value given on the command line."""
    group = bench.add_argument_group("device")
    group.add_argument("--encoder", help="local sentence-transformers BERT directory "
                       "(default: the packaged MiniLM)")  # fmt: skip
    group.add_argument("--ner-model", help="token-classification model id or path "
                       "(default: the hf NER backend's model)")  # fmt: skip
    group.add_argument("--texts", type=int, help="texts on CUDA (default 2048)")
    group.add_argument(
        "--cpu-texts", type=int, help="texts on the CPU, the first of the same texts (default 256)"
    )
    group.add_argument(
        "--rgcn",
        help="R-GCN graph and run: entities,facts,relation types,epochs "
        "(default 50000,200000,24,10)",
    )
    bench.set_defaults(device_json_default=bench.get_default("json_out"))


def run(args: argparse.Namespace) -> int:
    from benchmarks import device_paths as d
    from transforms.embedding import DEFAULT_ENCODER, resolve_model_path
    from transforms.ner_backends import DEFAULT_HF_NER_MODEL

    rgcn = d.parse_rgcn(args.rgcn) if args.rgcn else d.DEFAULT_RGCN
    json_out = Path(DEFAULT_JSON if args.json_out == args.device_json_default else args.json_out)
    report = d.run(
        args.encoder or resolve_model_path(DEFAULT_ENCODER),
        args.ner_model or DEFAULT_HF_NER_MODEL,
        d.DEFAULT_TEXTS if args.texts is None else args.texts,
        d.DEFAULT_CPU_TEXTS if args.cpu_texts is None else args.cpu_texts,
        rgcn,
        on_step=lambda step: console.print(step, highlight=False),
    )
    json_out.write_text(json.dumps(report.as_dict(), indent=2))
    table = Table(
        title=f"accelerated paths: CUDA ({report.cuda_device or 'none'}) against the CPU "
        f"({report.cpu_threads} threads), torch {report.torch_version}",
        caption="items per second in this process; ratio = CUDA / CPU; parity: how far "
        "CUDA's output is from the CPU's on the inputs both ran",
    )
    headers = ("path", "model", "CPU items", "CPU /s", "CUDA items", "CUDA /s", "ratio",
               "parity", "note")  # fmt: skip
    for i, column in enumerate(headers):
        table.add_column(column, justify="left" if i in (0, 1, 8) else "right")
    for p in report.paths:
        table.add_row(
            p.path, p.model, str(p.cpu_items), _figure(p.cpu_per_s), str(p.cuda_items),
            _figure(p.cuda_per_s), _figure(p.ratio),
            f"{p.parity:.3g} ({p.parity_measure})" if p.parity is not None else "", p.note,
        )  # fmt: skip
    out.print(table)
    out.print(f"results written to {json_out}")
    return 1 if any(p.note.startswith("failed") for p in report.paths) else 0


def _figure(value: float | None) -> str:
    return f"{value:,.2f}" if value is not None else ""
