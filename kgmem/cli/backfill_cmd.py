"""`kgmem backfill`: build a range of collection partitions, resumably, N at a time."""

from __future__ import annotations

import argparse
import functools

from rich.table import Table

from kgmem.cli.common import add_home, console, out, route_library_logs, timestamp
from stores.workspace import Workspace


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    backfill = commands.add_parser(
        "backfill",
        help="build a range of collection partitions (resumes: finished ones are skipped)",
    )
    which = backfill.add_mutually_exclusive_group(required=True)
    which.add_argument("--collections", help="comma-separated registered collections")
    which.add_argument("--from", dest="start", type=timestamp, help="first day partition")
    backfill.add_argument("--to", dest="end", type=timestamp, help="last day partition")
    backfill.add_argument(
        "--split",
        metavar="COLLECTION",
        help="with --from/--to: first split this conversation collection into day partitions",
    )
    backfill.add_argument(
        "--max-concurrent", type=int, default=1, help="partitions built at once (processes)"
    )
    backfill.add_argument(
        "--llm-slots", type=int, default=1, help="LLM stages at once (Dagster pool 'llm')"
    )
    backfill.add_argument(
        "--llm-backend",
        choices=["llama_cpp", "openai", "transformers", "none"],
        help="LLM backend of the triplet stage (default: the pipeline setting)",
    )
    backfill.add_argument(
        "--force", action="store_true", help="rebuild partitions already built from their inputs"
    )
    add_home(backfill)
    return backfill


def run(args: argparse.Namespace) -> int:
    from dagster_project.automation.backfill import (
        FAILED,
        PartitionOutcome,
        register_day_partitions,
        run_backfill,
    )
    from dagster_project.automation.days import select_days
    from dagster_project.automation.fingerprints import registered_collections
    from dagster_project.resources import WarehouseResource
    from dagster_project.resources.settings_file import load_settings

    workspace = Workspace.at(args.home)
    if args.collections:
        collections = [c.strip() for c in args.collections.split(",") if c.strip()]
    else:
        start, end = args.start.date(), (args.end or args.start).date()
        if end < start:
            raise ValueError(f"--to {end} is before --from {start}")
        if args.split:
            register_day_partitions(workspace, args.split, start, end)
        registered = registered_collections(WarehouseResource(root=str(workspace.root)))
        collections = select_days(registered, start, end, args.split)
    if not collections:
        console.print("nothing to backfill: no partition selected")
        return 0

    def report(outcome: PartitionOutcome) -> None:
        detail = outcome.error or outcome.snapshot_id or ""
        console.print(f"{outcome.collection}: {outcome.status} {detail}".rstrip())

    console.print(f"backfilling {len(collections)} partition(s), {args.max_concurrent} at a time")
    outcomes = run_backfill(
        collections,
        workspace,
        load_settings(
            workspace.root, {"llm_backend": args.llm_backend} if args.llm_backend else {}
        ),
        max_concurrent=args.max_concurrent,
        llm_slots=args.llm_slots,
        force=args.force,
        on_outcome=report,
        worker_setup=functools.partial(route_library_logs, workspace.root, args.verbose),
    )
    table = Table(title="backfill")
    for column in ("partition", "status", "seconds", "snapshot / error"):
        table.add_column(column, justify="right" if column == "seconds" else "left")
    for o in outcomes:
        table.add_row(o.collection, o.status, f"{o.seconds:.1f}", o.error or o.snapshot_id or "")
    out.print(table)
    return 1 if any(o.status == FAILED for o in outcomes) else 0
