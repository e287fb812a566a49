"""`kgmem eval`: build a benchmark as a collection and evaluate it through the Dagster assets.

    kgmem eval temporal --dataset ../shared/data/timeqa/human_annotated_train.json --articles 40

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
        "eval", help="evaluate retrieval on a benchmark", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    evaluate.add_argument("kind", choices=["temporal"], help="temporal: TimeQA hit@k")
    evaluate.add_argument("--dataset", required=True, help="benchmark file")
    evaluate.add_argument("--collection", default="timeqa", help="collection to build it as")
    evaluate.add_argument("--articles", type=int, help="only the first N articles")
    evaluate.add_argument("--json", action="store_true", help="machine-readable rows")
    add_home(evaluate)
    return evaluate


def run(args: argparse.Namespace) -> int:
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
