"""`kgmem train relation-classifier`: fit the pair classifier on a Re-DocRED-layout file.
`kgmem train fusion-weights`: fit KGERMAR's bank weights λ on dev questions.
`kgmem train hybrid-weights`: fit the `hybrid` strategy's signal weights for one corpus
kind on a retrieval benchmark's questions.
`kgmem train traversal-blend`: fit graph strategies' blend with the flat prior (their flat
share) for one corpus kind on a retrieval benchmark's questions.

The relation model (a calibrated linear probe over MiniLM pair features, numbers only) is
written to `<home>/models/relation_classifier/<name>/` with its metadata (data hash, split,
held-out documents, metrics); later builds in that workspace run it beside the dependency
patterns. The fusion weights (simplex grid, step 0.1, maximising recall@k on JSONL lines
{"question", "gold_segment_ids" | "gold_contains"}) go to `<home>/models/fusion_weights.json`
under the collection's name, where the kgermar_fusion strategy reads them.

    kgmem train hybrid-weights --benchmark musique|locomo [--collection NAME]
        [--dataset QUESTIONS] [--questions N]

fits the weights of BM25, the encoder and the second encoder on the newest snapshot of
the benchmark's collection (built by `kgmem eval retrieval`; default name: the benchmark),
for documents (MuSiQue, passage recall@5) or conversations (LoCoMo, turn recall@10), and
writes them to `<home>/models/hybrid_weights.json`; the next build pins them in its
snapshot. It prints the fitted, default and per-signal scores and a two-fold
cross-validated score.

    kgmem train traversal-blend --benchmark musique|locomo --strategies NAME,...
        [--grid 0,0.2,0.4] [--collection NAME] [--questions-limit N]

evaluates each strategy on the benchmark's newest snapshot once per flat share of the grid
(default 0 to 0.8 by 0.1) and prints the headline recalls per share and the best share
per strategy (MuSiQue passage recall@5 for documents, LoCoMo turn recall@10 for
conversations); `transforms/traversal_blend.py` holds the shares new snapshots pin.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from kgmem.cli.common import add_home, out
from stores.workspace import Workspace


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    train = commands.add_parser(
        "train", help="train the relation classifier or fit fusion weights",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    train.add_argument(
        "model",
        choices=["relation-classifier", "fusion-weights", "hybrid-weights", "traversal-blend"],
    )
    train.add_argument(
        "--dataset", help="relation-classifier: Re-DocRED-layout JSON; hybrid-weights: questions"
    )
    train.add_argument(
        "--name", help="relation-classifier artifact name (default: the one builds look for)"
    )
    train.add_argument("--questions", help="fusion-weights: dev questions (JSONL)")
    train.add_argument("--collection", help="fusion-weights: newest snapshot of this collection")
    train.add_argument("--snapshot", help="fusion-weights: snapshot id (default: the newest)")
    train.add_argument("--k", type=int, default=5, help="fusion-weights: recall@k to maximise")
    train.add_argument(
        "--benchmark", choices=["musique", "locomo"], help="hybrid-weights: whose questions"
    )
    train.add_argument(
        "--questions-limit", type=int, help="hybrid-weights: only the first N questions"
    )
    train.add_argument("--strategies", help="traversal-blend: graph strategies, comma separated")
    train.add_argument(
        "--grid", help="traversal-blend: flat shares to try, comma separated (default 0-0.8)"
    )
    add_home(train)
    return train


def run(args: argparse.Namespace) -> int:
    if args.model == "fusion-weights":
        return _fusion_weights(args)
    if args.model == "hybrid-weights":
        return _hybrid_weights(args)
    if args.model == "traversal-blend":
        return _traversal_blend(args)
    if not args.dataset:
        raise ValueError("train relation-classifier needs --dataset")
    from transforms.relation_classifier.probe import DEFAULT_NAME, artifact_dir
    from transforms.relation_classifier.training import train_relation_classifier

    folder = artifact_dir(Workspace.at(args.home).root, args.name or DEFAULT_NAME)
    metadata = train_relation_classifier(args.dataset, folder)
    out.print_json(json.dumps(metadata.get("metrics", metadata), default=str))
    out.print(f"model written to {folder}")
    return 0


def _fusion_weights(args: argparse.Namespace) -> int:
    from memory import Memory
    from memory.fusion_fit import fit_fusion_weights, read_questions
    from memory.fusion_weights import write_fitted

    if not args.questions:
        raise ValueError("train fusion-weights needs --questions FILE.jsonl")
    with Memory.open(args.home, snapshot=args.snapshot, collection=args.collection) as memory:
        questions = read_questions(args.questions, memory._view)
        fit = fit_fusion_weights(memory, questions, k=args.k)
    path = write_fitted(Workspace.at(args.home).root, memory.snapshot.collection, fit.as_dict())
    out.print_json(json.dumps(fit.as_dict()))
    out.print(f"fusion weights for {memory.snapshot.collection!r} written to {path}")
    return 0


def _hybrid_weights(args: argparse.Namespace) -> int:
    from kgmem.cli.eval_cmd import RETRIEVAL_DATA
    from memory import Memory
    from memory.evaluation import snapshot_segments
    from memory.hybrid_fit import fit_hybrid_weights
    from transforms.evaluation.retrieval_questions import load_questions
    from transforms.hybrid_weights import write_fitted

    if not args.benchmark:
        raise ValueError("train hybrid-weights needs --benchmark musique|locomo")
    corpus, questions_file = RETRIEVAL_DATA[args.benchmark]
    dataset = args.dataset or questions_file or corpus
    collection = args.collection or args.benchmark
    with Memory.open(args.home, snapshot=args.snapshot, collection=collection) as memory:
        questions = load_questions(
            args.benchmark, dataset, snapshot_segments(memory), args.questions_limit
        )
        fit = fit_hybrid_weights(memory, questions)
    path = write_fitted(Workspace.at(args.home).root, fit.kind, fit.as_dict())
    out.print_json(json.dumps(fit.as_dict()))
    out.print(f"hybrid weights for {fit.kind} written to {path}; the next build pins them")
    return 0


def _traversal_blend(args: argparse.Namespace) -> int:
    from kgmem.cli.eval_cmd import DATA_ENV, RETRIEVAL_DATA
    from memory import Memory
    from memory.blend_fit import GRID, fit_blend
    from memory.evaluation import snapshot_segments
    from memory.strategies.registry import GRAPH_STRATEGIES
    from transforms.evaluation.retrieval_questions import load_questions

    if not args.benchmark or not args.strategies:
        raise ValueError("train traversal-blend needs --benchmark musique|locomo and --strategies")
    strategies = args.strategies.split(",")
    unknown = sorted(set(strategies) - set(GRAPH_STRATEGIES))
    if unknown:
        raise ValueError(f"not graph strategies: {unknown}; choose from {list(GRAPH_STRATEGIES)}")
    grid = [float(share) for share in args.grid.split(",")] if args.grid else list(GRID)
    corpus, questions_file = RETRIEVAL_DATA[args.benchmark]
    dataset = Path(args.dataset or questions_file or corpus)
    if not dataset.exists():  # a benchmark default: under the data folder
        dataset = Path(os.environ.get(DATA_ENV, ".")) / dataset
    collection = args.collection or args.benchmark
    with Memory.open(args.home, snapshot=args.snapshot, collection=collection) as memory:
        questions = load_questions(
            args.benchmark, dataset, snapshot_segments(memory), args.questions_limit
        )
        for strategy in strategies:
            fit = fit_blend(memory, questions, strategy, grid)
            for share, values in fit.figures.items():
                out.print(
                    f"{strategy} {fit.kind} flat_share={share:.2f}: "
                    + " ".join(f"{m}={v:.3f}" for m, v in values.items() if "[" not in m),
                    highlight=False,
                )
            out.print(
                f"{strategy}: best flat share for {fit.kind} {fit.best:.2f} "
                f"({fit.objective} {fit.figures[fit.best][fit.objective]:.3f}; "
                f"current {fit.current:.2f})",
                highlight=False,
            )
    return 0
