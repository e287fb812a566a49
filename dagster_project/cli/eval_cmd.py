"""`kgmem eval`: evaluate extraction, consolidation and temporal retrieval on benchmarks.

    kgmem eval extraction --dataset ../shared/data/redocred/dev_revised.json [--limit N]
    kgmem eval consolidation --dataset ../shared/data/redocred/dev_revised.json
    kgmem eval window-recall --dataset ../shared/data/redocred/dev_revised.json
    kgmem eval temporal --dataset ../shared/data/timeqa/human_annotated_train.json --articles 40

`extraction` materialises the `extraction_evaluation` asset (NER and relation P/R/F1;
the trained pair classifier is scored on the documents it held out) and prints its report.
`consolidation` scores entity resolution against Re-DocRED's coreference groups.
`window-recall` shows how KGERMAR's pair window W bounds relation recall.

`temporal` writes TimeQA's paragraphs as a JSONL collection (`timeqa` unless
`--collection`), registers the benchmark, builds the collection (the `temporal_evaluation`
asset runs as its last stage) and prints hit@k per strategy with and without the
question's reference time.
"""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from dagster_project.cli.build_cmd import build_with_progress
from dagster_project.cli.common import add_home, out
from memory.workspace import Workspace

RESULTS_SQL = """
SELECT strategy, metric, value, snapshot_id FROM evaluation_results
WHERE collection = ? AND snapshot_id = ? AND benchmark = ? ORDER BY strategy, metric
"""


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    evaluate = commands.add_parser(
        "eval",
        help="evaluate retrieval on a benchmark",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    evaluate.add_argument("kind", choices=sorted(RUNNERS), help="what to evaluate")
    evaluate.add_argument("--dataset", required=True, help="benchmark file")
    evaluate.add_argument("--collection", default="timeqa", help="collection to build it as")
    evaluate.add_argument("--articles", type=int, help="temporal: only the first N articles")
    evaluate.add_argument("--limit", type=int, help="Re-DocRED: only the first N documents")
    evaluate.add_argument(
        "--llm-documents", type=int, default=0, help="extraction: score the LLM on N documents"
    )
    evaluate.add_argument("--json", action="store_true", help="machine-readable rows")
    add_home(evaluate)
    return evaluate


def run(args: argparse.Namespace) -> int:
    return RUNNERS[args.kind](args)


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
    from dagster_project.resources import WarehouseResource
    from memory.snapshots import list_snapshots
    from transforms.evaluation.timeqa import load_timeqa

    workspace = Workspace.at(args.home)
    dataset = load_timeqa(args.dataset, args.articles)
    folder = workspace.root / "benchmarks" / args.collection
    folder.mkdir(parents=True, exist_ok=True)
    documents = folder / "paragraphs.jsonl"
    documents.write_text(
        "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in dataset.documents)
    )
    options = {"max_articles": args.articles}
    WarehouseResource(root=str(workspace.root)).register_benchmark(
        args.collection, "timeqa", args.dataset, options
    )
    if build_with_progress(args.collection, [str(documents)], workspace) is None:
        return 1
    con = workspace.connect(read_only=True)
    snapshot = list_snapshots(con, args.collection)[0].snapshot_id
    rows = (
        con.sql(RESULTS_SQL, params=[args.collection, snapshot, "timeqa"])
        .to_arrow_table()
        .to_pylist()
    )
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    table = Table(title=f"TimeQA hit@k ({len(dataset.questions)} questions, snapshot {snapshot})")
    for column in ("strategy", "k", "ignoring time", "at the question's time", "change"):
        table.add_column(column, justify="left" if column == "strategy" else "right")
    values = {(r["strategy"], r["metric"]): r["value"] for r in rows}
    for strategy, metric in sorted(k for k in values if k[1].endswith("_with_time")):
        k = metric.removeprefix("hit@").removesuffix("_with_time")
        timed, plain = values[(strategy, metric)], values[(strategy, f"hit@{k}_ignoring_time")]
        table.add_row(strategy, k, f"{plain:.3f}", f"{timed:.3f}", f"{timed - plain:+.3f}")
    out.print(table)
    return 0


RUNNERS = {
    "extraction": _extraction,
    "consolidation": _consolidation,
    "window-recall": _window_recall,
    "temporal": _temporal,
}
