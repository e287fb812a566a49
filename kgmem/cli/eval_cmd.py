"""`kgmem eval`: evaluate extraction, consolidation and temporal retrieval on benchmarks.

    kgmem eval extraction --dataset redocred/dev_revised.json [--limit N]
    kgmem eval consolidation --dataset redocred/dev_revised.json
    kgmem eval window-recall --dataset redocred/dev_revised.json
    kgmem eval temporal --dataset timeqa/human_annotated_train.json --articles 40

`extraction` materialises the `extraction_evaluation` asset (NER and relation P/R/F1;
the trained pair classifier is scored on the documents it held out) and prints its report.
`consolidation` scores entity resolution against Re-DocRED's coreference groups.
`window-recall` shows how KGERMAR's pair window W bounds relation recall.

`temporal` writes TimeQA's paragraphs as a JSONL collection (`timeqa` unless
`--collection`), builds it, runs the `evaluate_temporal` job on it and prints hit@k per
strategy with and without the question's reference time.

    kgmem eval retrieval --benchmark locomo|musique [--strategies all|NAME,...]
        [--input PATH] [--dataset QUESTIONS] [--questions N] [--json] [--jobs N]
        [--misses FILE] [--reranker MODEL [--rerank-depth N]]
        [--settings FILE] [build options of `kgmem build`: --chunk-tokens N, --llm BACKEND, ...]

`retrieval` builds the benchmark's corpus as a collection (`locomo` / `musique` unless
`--collection`; LoCoMo's conversations, MuSiQue's passage corpus), then runs the
`evaluate_retrieval` job (`retrieval_evaluation`, `retrieval_comparison`) on the new
snapshot and prints the side-by-side table (MuSiQue passage recall@2/5 and MRR; LoCoMo
turn- and session-level recall@3/5/10). Relative dataset paths, and the benchmark's
default files (LoCoMo: `locomo/locomo10_dev.json`; MuSiQue:
`musique/musique_train_corpus.json` and `musique/musique_train.json`), are found under
`--data` (default `$KGMEM_DATA`). The build takes `kgmem build`'s options and `--settings FILE`
(default `<home>/kgmem.toml`), without the LLM triplet stage unless `--llm BACKEND` or the
`--settings` file names one, so a benchmark builds in minutes. Settings other than the
defaults name the collection after them (`locomo-<digest>`), and they are recorded in the
evaluation's metadata and reports. An unchanged corpus reuses its snapshot. While the
strategies run, the strategy, questions done of total and the time elapsed are shown;
`--jobs N` splits the strategies over N processes (the same figures).
`--misses FILE` writes, for each gold passage (MuSiQue: outside the first 5; LoCoMo turns:
outside the first 10) a strategy missed, its rank under every strategy and the seeds, flat
ranking and paths that the strategy used: the place to start when a strategy trails.
`--reranker MODEL` (any cross-encoder id or path) adds reranked variants: `NAME+rerank` in
`--strategies`, or `hipporag_ppr+rerank` when none is named; the first `--rerank-depth`
passages (20) are put in the model's order.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from rich.table import Table

from kgmem.cli.build_cmd import build_with_progress
from kgmem.cli.build_options import add_build_options, build_overrides, settings_file
from kgmem.cli.common import add_home, console, out
from stores.workspace import Workspace

DATA_ENV = "KGMEM_DATA"
RETRIEVAL_DATA = {
    "locomo": ("locomo/locomo10_dev.json", None),
    "musique": ("musique/musique_train_corpus.json", "musique/musique_train.json"),
}
"""Default (corpus, questions) per retrieval benchmark, under the data folder; None: the
questions are in the corpus."""


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    evaluate = commands.add_parser(
        "eval",
        help="evaluate retrieval on a benchmark",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    evaluate.add_argument("kind", choices=sorted(RUNNERS), help="what to evaluate")
    evaluate.add_argument(
        "--dataset", help="benchmark file (retrieval: the questions; default by benchmark)"
    )
    evaluate.add_argument(
        "--collection", help="collection to build it as (default: timeqa, or the benchmark)"
    )
    evaluate.add_argument("--articles", type=int, help="temporal: only the first N articles")
    evaluate.add_argument("--limit", type=int, help="Re-DocRED: only the first N documents")
    evaluate.add_argument(
        "--llm-documents", type=int, default=0, help="extraction: score the LLM on N documents"
    )
    evaluate.add_argument(
        "--benchmark", choices=sorted(RETRIEVAL_DATA), help="retrieval: which benchmark"
    )
    evaluate.add_argument(
        "--strategies", default="all", help="retrieval: all, or strategy names split by commas"
    )
    evaluate.add_argument(
        "--input", help="retrieval: the corpus file (default: the benchmark's, under --data)"
    )
    evaluate.add_argument("--questions", type=int, help="retrieval: only the first N questions")
    evaluate.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="retrieval: processes the strategies are split over (default 1)",
    )
    evaluate.add_argument(
        "--misses",
        help="retrieval: write a JSON line per gold passage a strategy missed (its rank under "
        "each strategy, the seeds and paths the strategy used) to this file",
    )
    evaluate.add_argument(
        "--reranker",
        help="retrieval: a cross-encoder id or path; evaluates NAME+rerank variants (the "
        "strategy's first passages in the model's order), hipporag_ppr+rerank unless named",
    )
    evaluate.add_argument(
        "--rerank-depth", type=int, help="retrieval: passages the reranker reorders (default 20)"
    )
    evaluate.add_argument(
        "--data",
        help=f"folder that relative dataset paths and the default files are under "
        f"(default ${DATA_ENV}, else the current folder)",
    )
    evaluate.add_argument("--json", action="store_true", help="machine-readable rows")
    add_home(evaluate)
    add_build_options(evaluate.add_argument_group("build options (retrieval)"))
    return evaluate


def run(args: argparse.Namespace) -> int:
    if args.kind != "retrieval" and args.dataset is None:
        console.print(f"[red]eval {args.kind} needs --dataset[/red]")
        return 2
    if args.dataset is not None:
        args.dataset = str(data_path(args, args.dataset))
    return RUNNERS[args.kind](args)


def data_path(args: argparse.Namespace, path: str) -> Path:
    """`path`, or relative to it, the data folder (`--data`, else `$KGMEM_DATA`)."""
    given = Path(path).expanduser()
    if given.is_absolute() or given.exists():
        return given.resolve()
    root = args.data or os.environ.get(DATA_ENV)
    if root is None:
        raise FileNotFoundError(f"{path} not found (relative paths are looked up under --data)")
    found = Path(root).expanduser() / given
    if not found.exists():
        raise FileNotFoundError(f"{path} not found under the data folder {root}")
    return found.resolve()


def _extraction(args: argparse.Namespace) -> int:
    import dagster as dg

    from dagster_project.build import QUIET_LOGS, prepare_instance
    from dagster_project.defs.extraction_evaluation.assets import (
        RESULTS_FILE,
        extraction_evaluation,
    )
    from dagster_project.resources import PipelineSettings, WarehouseResource

    workspace = Workspace.at(args.home)
    config = {
        "dataset": str(args.dataset),
        "limit": args.limit,
        "llm_documents": args.llm_documents,
    }
    result = dg.materialize(
        [extraction_evaluation],
        instance=prepare_instance(workspace),
        resources={
            "warehouse": WarehouseResource(root=str(workspace.root)),
            "settings": PipelineSettings(),
        },
        run_config={**QUIET_LOGS, "ops": {"extraction_evaluation": {"config": config}}},
    )
    if not result.success:
        return 1
    report = json.loads((workspace.root / "results" / RESULTS_FILE).read_text())
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        materialization = result.asset_materializations_for_node("extraction_evaluation")[0]
        out.print(materialization.metadata["report"].value.strip("`\n"), highlight=False)
        if "llm_subset" in report:
            out.print_json(data=report["llm_subset"]["relations"])
    return 0


def _consolidation(args: argparse.Namespace) -> int:
    from transforms.embedding import encode
    from transforms.evaluation.consolidation import consolidation_scores
    from transforms.redocred import load_redocred

    documents = load_redocred(args.dataset)[: args.limit]
    scores = consolidation_scores(documents, lambda keys: encode(list(keys)))
    if args.json:
        print(json.dumps([s.__dict__ for s in scores], indent=2))
        return 0
    table = Table(title=f"entity consolidation, pairwise, {len(documents)} documents")
    for column in ("method", "P", "R", "F1", "gold pairs", "predicted pairs"):
        table.add_column(column, justify="left" if column == "method" else "right")
    for s in scores:
        table.add_row(
            s.method,
            f"{s.precision:.3f}",
            f"{s.recall:.3f}",
            f"{s.f1:.3f}",
            str(s.pairs_gold),
            str(s.pairs_predicted),
        )
    out.print(table)
    return 0


def _window_recall(args: argparse.Namespace) -> int:
    from transforms.evaluation.window_recall import window_recall
    from transforms.redocred import load_redocred

    rows = [r.to_dict() for r in window_recall(load_redocred(args.dataset)[: args.limit])]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    table = Table(title="relation recall reachable within a pair window W")
    for column in ("W", "recall", "recall in one chunk", "mention pairs"):
        table.add_column(column, justify="right")
    for r in rows:
        window = "any" if r["window"] is None else str(r["window"])
        table.add_row(
            window, f"{r['recall']:.3f}", f"{r['recall_in_chunk']:.3f}", str(r["mention_pairs"])
        )
    out.print(table)
    return 0


def _temporal(args: argparse.Namespace) -> int:
    from dagster_project.automation.jobs import TEMPORAL_JOB
    from dagster_project.build import evaluate_collection
    from dagster_project.definitions import kgmem_definitions
    from stores.evaluation_results import evaluation_rows, newest_snapshot
    from stores.warehouse import Warehouse
    from transforms.evaluation.timeqa import load_timeqa

    workspace = Workspace.at(args.home)
    args.collection = args.collection or "timeqa"
    dataset = load_timeqa(args.dataset, args.articles)
    folder = workspace.root / "benchmarks" / args.collection
    folder.mkdir(parents=True, exist_ok=True)
    documents = folder / "paragraphs.jsonl"
    documents.write_text(
        "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in dataset.documents)
    )
    build_with_progress(args.collection, [str(documents)], workspace)
    config = {"dataset": args.dataset, "max_articles": args.articles}
    failed = evaluate_collection(
        args.collection,
        workspace,
        kgmem_definitions(),
        TEMPORAL_JOB,
        {"temporal_evaluation": config},
    )
    warehouse = Warehouse(str(workspace.root))
    snapshot = newest_snapshot(warehouse, args.collection)
    rows = evaluation_rows(warehouse, args.collection, snapshot, "timeqa")
    if args.json:
        print(json.dumps(rows, indent=2))
        return _failed_checks(failed)
    table = Table(title=f"TimeQA hit@k ({len(dataset.questions)} questions, snapshot {snapshot})")
    for column in ("strategy", "k", "ignoring time", "at the question's time", "change"):
        table.add_column(column, justify="left" if column == "strategy" else "right")
    values = {(r["strategy"], r["metric"]): r["value"] for r in rows}
    for strategy, metric in sorted(k for k in values if k[1].endswith("_with_time")):
        k = metric.removeprefix("hit@").removesuffix("_with_time")
        timed, plain = values[(strategy, metric)], values[(strategy, f"hit@{k}_ignoring_time")]
        table.add_row(strategy, k, f"{plain:.3f}", f"{timed:.3f}", f"{timed - plain:+.3f}")
    out.print(table)
    return _failed_checks(failed)


def _retrieval(args: argparse.Namespace) -> int:
    from dagster_project.automation.jobs import RETRIEVAL_JOB
    from dagster_project.build import evaluate_collection
    from dagster_project.definitions import kgmem_definitions
    from kgmem.cli.eval_progress import evaluation_progress
    from memory.evaluation import (
        RERANKED,
        RERANKED_BY_DEFAULT,
        base_strategy,
        evaluated_names,
        split_variant,
    )
    from memory.reranker import RERANK_DEPTH
    from memory.strategies.names import STRATEGY_NAMES
    from stores.evaluation_results import evaluation_rows, newest_snapshot
    from stores.warehouse import Warehouse
    from transforms.evaluation.retrieval_report import by_strategy, comparison_markdown

    if args.benchmark is None:
        console.print("[red]eval retrieval needs --benchmark locomo|musique[/red]")
        return 2
    strategies = [] if args.strategies == "all" else args.strategies.split(",")
    unknown = sorted({base_strategy(s) for s in strategies} - set(STRATEGY_NAMES))
    if unknown:
        console.print(f"[red]unknown strategies {unknown}; known: {list(STRATEGY_NAMES)}[/red]")
        return 2
    reranked = [s for s in strategies if split_variant(s)[1]]
    if reranked and not args.reranker:
        console.print(f"[red]{', '.join(reranked)} need --reranker MODEL[/red]")
        return 2
    if args.reranker:
        strategies = (strategies or list(STRATEGY_NAMES)) + (
            [] if reranked else [f"{s}{RERANKED}" for s in RERANKED_BY_DEFAULT]
        )
    default_corpus, default_questions = RETRIEVAL_DATA[args.benchmark]
    corpus = data_path(args, args.input or default_corpus)
    if args.dataset:
        dataset = Path(args.dataset)
    else:  # LoCoMo's questions are in its corpus file
        dataset = data_path(args, default_questions) if default_questions else corpus
    if args.jobs < 1:
        console.print(f"[red]--jobs must be at least 1, got {args.jobs}[/red]")
        return 2
    workspace = Workspace.at(args.home)
    settings = eval_settings(workspace, args)
    collection = args.collection or eval_collection(args.benchmark, settings)
    build_with_progress(collection, [str(corpus)], workspace, settings)
    recorded = settings.model_dump(mode="json")
    config = {
        "benchmark": args.benchmark,
        "dataset": str(dataset),
        "strategies": strategies,
        "questions": args.questions,
        "reranker": args.reranker,
        "rerank_depth": args.rerank_depth or RERANK_DEPTH,
        "misses": str(Path(args.misses).resolve()) if args.misses else None,
        "jobs": args.jobs,
        "build_settings": json.dumps(recorded),
    }
    names = evaluated_names(strategies)
    with evaluation_progress(workspace, collection, names, args.jobs):
        failed = evaluate_collection(
            collection,
            workspace,
            kgmem_definitions(),
            RETRIEVAL_JOB,
            {
                "retrieval_evaluation": config,
                "retrieval_comparison": {
                    "benchmark": args.benchmark,
                    "build_settings": config["build_settings"],
                },
            },
        )
    warehouse = Warehouse(str(workspace.root))
    snapshot = newest_snapshot(warehouse, collection)
    rows = evaluation_rows(warehouse, collection, snapshot, args.benchmark)
    if args.json:
        print(json.dumps(rows, indent=2))
        return _failed_checks(failed)
    print(comparison_markdown(args.benchmark, rows, snapshot, recorded))
    out.print(
        f"{len(by_strategy(rows))} strategies; results in {workspace.root / 'results'}",
        highlight=False,
    )
    return _failed_checks(failed)


def eval_settings(workspace: Workspace, args: argparse.Namespace):  # noqa: ANN201 (Dagster)
    """The build settings of an evaluation: the build options given over the settings
    file (`--settings`, else the workspace's), without the LLM triplet stage unless
    `--llm BACKEND` or a `--settings` file names one, so a benchmark builds in minutes."""
    from dagster_project.resources.settings_file import file_settings, load_settings

    given = settings_file(args)
    overrides = build_overrides(args)
    named = given is not None and "llm_backend" in file_settings(workspace.root, given)
    if "llm_backend" not in overrides and not named:
        overrides["llm_backend"] = "none"
    return load_settings(workspace.root, overrides, given)


def eval_collection(benchmark: str, settings: object) -> str:
    """The collection an evaluation builds: the benchmark's name with the default build
    settings (LLM stage off), else the name and a digest of the settings that differ
    (`locomo-1f0c2a9b`), so evaluations of two build options keep a snapshot each
    instead of rebuilding one collection back and forth."""
    from dagster_project.resources import PipelineSettings
    from transforms.ids import content_id

    default = PipelineSettings(llm_backend="none").model_dump(mode="json")
    chosen = settings.model_dump(mode="json")  # type: ignore[attr-defined]
    changed = {key: value for key, value in chosen.items() if default.get(key) != value}
    return f"{benchmark}-{content_id(changed)[:8]}" if changed else benchmark


def _failed_checks(failed: list[str]) -> int:
    """1 after naming the evaluation checks that failed (on stderr), else 0."""
    if failed:
        console.print(f"[red]evaluation checks failed:[/red] {', '.join(failed)}")
    return 1 if failed else 0


RUNNERS = {
    "extraction": _extraction,
    "consolidation": _consolidation,
    "window-recall": _window_recall,
    "temporal": _temporal,
    "retrieval": _retrieval,
}
