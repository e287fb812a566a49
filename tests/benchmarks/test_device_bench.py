"""`kgmem bench device` on the CPU (CI has no GPU): every path measured with a tiny NER
model and a small graph, a failing path reported without stopping the others, the help's
defaults equal to the benchmark's, and argument errors. No timing assertions.

The CUDA side (throughput, ratios, parity) ran on an H200; its figures are in
docs/benchmarks.md."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from benchmarks import device_paths
from kgmem.cli import main
from kgmem.cli.bench_cmd import add_parser
from tests.transforms.test_hf_ner import build_tiny_ner_model
from transforms.embedding import DEFAULT_ENCODER, resolve_model_path

SMALL = ["--texts", "6", "--cpu-texts", "4", "--rgcn", "300,1200,5,2"]


@pytest.fixture(scope="module")
def tiny_ner(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_tiny_ner_model(tmp_path_factory.mktemp("ner"))


def test_every_path_is_measured_on_the_cpu(tiny_ner: str, tmp_path: Path) -> None:
    json_out = tmp_path / "device.json"
    argv = ["bench", "device", "--ner-model", tiny_ner, *SMALL, "--json-out", str(json_out)]
    assert main(argv) == 0
    report = json.loads(json_out.read_text())
    assert [p["path"] for p in report["paths"]] == ["encoder", "ner", "rgcn"]
    cuda = torch.cuda.is_available()
    for path in report["paths"]:
        assert path["cpu_per_s"] > 0, path
        assert path["cpu_items"] == (2 if path["path"] == "rgcn" else 4)
        if not cuda:
            assert path["cuda_per_s"] is None and path["ratio"] is None
            assert path["note"] == "no CUDA device: CPU only"
    assert report["cpu_threads"] >= 1 and report["torch_version"] == torch.__version__


def test_a_failing_path_is_reported_and_the_others_run(tmp_path: Path) -> None:
    report = device_paths.run(
        resolve_model_path(DEFAULT_ENCODER),
        str(tmp_path / "no-such-model"),
        3,
        2,
        (50, 100, 3, 1),
        on_step=lambda _: None,
    )
    notes = {p.path: p.note for p in report.paths}
    assert notes["ner"].startswith("failed:")
    assert report.paths[0].cpu_per_s and report.paths[2].cpu_per_s


def test_random_graph_is_seeded_and_in_range() -> None:
    heads, kinds, tails, text = device_paths.random_graph(100, 500, 4)
    again = device_paths.random_graph(100, 500, 4)
    assert all((a == b).all() for a, b in zip((heads, kinds, tails, text), again, strict=True))
    assert heads.max() < 100 and tails.max() < 100 and kinds.max() < 4 and heads.min() >= 0
    assert text.shape == (100, device_paths.TEXT_WIDTH)
    assert abs(float((text**2).sum(axis=1).mean()) - 1.0) < 1e-5


def test_help_states_the_benchmarks_defaults() -> None:
    import argparse

    parser = add_parser(argparse.ArgumentParser().add_subparsers())
    helps = {a.dest: a.help for a in parser._actions}
    assert f"default {device_paths.DEFAULT_TEXTS}" in helps["texts"]
    assert f"default {device_paths.DEFAULT_CPU_TEXTS}" in helps["cpu_texts"]
    assert ",".join(map(str, device_paths.DEFAULT_RGCN)) in helps["rgcn"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--rgcn", "1,2,3"], "--rgcn takes four positive integers"),
        (["--rgcn", "1,2,x,4"], "--rgcn takes four positive integers"),
        (["--texts", "2", "--cpu-texts", "3"], "need 1 <= cpu_texts <= texts"),
    ],
)
def test_bad_arguments_are_one_line_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    json_out = tmp_path / "d.json"
    assert main(["bench", "device", *argv, "--json-out", str(json_out)]) == 2
    assert message in capsys.readouterr().err
    assert not json_out.exists()
