"""The `kgmem` command line: build a collection, query a snapshot, list snapshots, open the UI.

    kgmem build --collection NAME --input PATH [--input PATH ...]
    kgmem query "TEXT" [--snapshot ID] [--strategy dense|bm25|ppr] [-k N] [--json] [--explain]
    kgmem facts ENTITY [--valid-at DATE] [--known-at DATE] [--relation R] [--json]
    kgmem entities show|split|merge NAME [OTHER] --collection NAME
    kgmem snapshots [--collection NAME] [--json]
    kgmem ui [--port 3000]

Every command takes `--home` (default: `$KGMEM_HOME`, else ./kgmem_home).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from datetime import datetime

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from memory.workspace import HOME_ENV, Workspace

console = Console(stderr=True)
out = Console(width=None if sys.stdout.isatty() else 110)


def _add_home(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", help=f"workspace folder (default: ${HOME_ENV} or ./kgmem_home)")


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="kgmem", description=__doc__.split("\n\n")[0])
    commands = root.add_subparsers(dest="command", required=True)

    build = commands.add_parser("build", help="materialise every stage of a collection")
    build.add_argument("--collection", required=True, help="collection (partition) name")
    build.add_argument("--input", action="append", required=True, help="file or folder; repeatable")
    build.add_argument("--chunk-tokens", type=int, help="token budget of a document chunk")
    build.add_argument("--spacy-model", help="spaCy package name or path for NER and parsing")
    build.add_argument("--encoder", help="sentence-transformers model id or path")
    _add_home(build)

    query = commands.add_parser("query", help="retrieve segments from a snapshot")
    query.add_argument("text", help="the query")
    query.add_argument("--snapshot", help="snapshot id (default: the newest)")
    query.add_argument("--collection", help="newest snapshot of this collection")
    query.add_argument("--strategy", default="dense", choices=["dense", "bm25", "ppr"])
    query.add_argument("-k", type=int, default=5, help="number of segments (default 5)")
    query.add_argument("--json", action="store_true", help="machine-readable output")
    query.add_argument("--explain", action="store_true", help="print the strategy's explanation")
    query.add_argument(
        "--valid-at", type=_timestamp, help="reference time: facts valid then, no later segments"
    )
    _add_home(query)

    facts = commands.add_parser(
        "facts", help="fact history of an entity, as-of on valid and recorded time"
    )
    facts.add_argument("entity", help="entity name or alias, e.g. 'Sam Okafor'")
    facts.add_argument("--collection", help="collection (default: that of the newest snapshot)")
    facts.add_argument("--valid-at", type=_timestamp, help="only facts true at this time")
    facts.add_argument("--known-at", type=_timestamp, help="as the memory believed at this time")
    facts.add_argument("--relation", help="only this relation, e.g. live_in")
    facts.add_argument("--stable-only", action="store_true", help="only confidence >= 0.8")
    facts.add_argument("--json", action="store_true", help="machine-readable output")
    _add_home(facts)

    entities = commands.add_parser(
        "entities",
        help="show an entity's merges, or split / merge entities (next build honours it)",
    )
    entities.add_argument("action", choices=["show", "split", "merge"])
    entities.add_argument("names", nargs="+", help="show: NAME; split / merge: NAME OTHER")
    entities.add_argument("--collection", required=True, help="collection name")
    _add_home(entities)

    snapshots = commands.add_parser("snapshots", help="list memory snapshots")
    snapshots.add_argument("--collection", help="only this collection")
    snapshots.add_argument("--json", action="store_true", help="machine-readable output")
    _add_home(snapshots)

    ui = commands.add_parser("ui", help="start the Dagster webserver on 127.0.0.1")
    ui.add_argument("--port", type=int, default=3000)
    _add_home(ui)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.home:
        os.environ[HOME_ENV] = str(Workspace.at(args.home).root)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        handlers = {
            "build": _build,
            "query": _query,
            "facts": _facts,
            "entities": _entities,
            "snapshots": _snapshots,
            "ui": _ui,
        }
        return handlers[args.command](args)
    except (FileNotFoundError, LookupError, ValueError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2


def _build(args: argparse.Namespace) -> int:
    from dagster_project.build import BuildFailed, StageSummary, build_collection
    from dagster_project.definitions import ALL_ASSETS, defs
    from dagster_project.resources import PipelineSettings

    overrides = {
        "chunk_tokens": args.chunk_tokens,
        "spacy_model": args.spacy_model,
        "encoder_model": args.encoder,
    }
    settings = PipelineSettings(**{k: v for k, v in overrides.items() if v is not None})
    workspace = Workspace.at(args.home)
    summaries: list[StageSummary] = []
    columns = (SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console) as progress:
        task = progress.add_task(f"building {args.collection}", total=len(ALL_ASSETS))

        def on_stage(stage: str, summary: StageSummary | None) -> None:
            if summary is None:
                progress.update(task, description=f"{args.collection}: {stage}")
            else:
                progress.advance(task)

        try:
            summaries = build_collection(
                args.collection, args.input, workspace, defs, settings, on_stage
            )
        except BuildFailed as exc:
            console.print(f"[red]build failed:[/red] {exc}")
            return 1
    out.print(_summary_table(summaries))
    snapshot = summaries[-1].metadata.get("snapshot_id")
    out.print(f"snapshot: [bold]{snapshot}[/bold]  (workspace {workspace.root})")
    return 0


def _summary_table(summaries: Sequence[object]) -> Table:
    table = Table(title="stage summary")
    for column in ("stage", "rows in", "rows out", "quarantined", "seconds", "status"):
        table.add_column(column, justify="left" if column in {"stage", "status"} else "right")
    for s in summaries:
        checks = ", ".join(f"{name} {'ok' if ok else 'FAILED'}" for name, ok in s.checks.items())
        status = ("unchanged" if s.skipped else "done") + (f" ({checks})" if checks else "")
        table.add_row(
            s.stage, str(s.rows_in), str(s.rows_out), str(s.quarantined), f"{s.seconds:.2f}", status
        )
    return table


def _query(args: argparse.Namespace) -> int:
    from memory import Memory

    result = Memory.open(args.home, snapshot=args.snapshot, collection=args.collection).query(
        args.text, strategy=args.strategy, k=args.k, valid_at=args.valid_at
    )
    if args.json:
        print(json.dumps(result.as_dict(), indent=2, ensure_ascii=False))
        return 0
    out.print(f"[bold]{args.text}[/bold]  ({result.strategy}, snapshot {result.snapshot_id})")
    if args.explain:
        out.print_json(data=result.explanation)
    for hit in result.hits:
        p = hit.provenance
        where = f"{p['title']} [{p['char_start']}:{p['char_end']}]"
        when = p["observed_at"] or "undated"
        who = f" {p['speaker']}, {p['turn_id']}" if p["speaker"] else ""
        out.print(f"{hit.rank}. ({hit.score:.4f}) [cyan]{where}[/cyan] {when}{who}")
        out.print(f"   {hit.text}", highlight=False)
        for fact in hit.facts:
            valid = f"{fact['valid_from'] or '?'} .. {fact['valid_to'] or 'now'}"
            out.print(
                f"   [green]fact[/green] {fact['head']} —{fact['relation']}→ {fact['tail']}"
                f"  (conf {fact['confidence']:.2f}, valid {valid})"
            )
    return 0


def _timestamp(value: str) -> datetime:
    from transforms.timeparse import parse_time

    try:
        return parse_time(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _facts(args: argparse.Namespace) -> int:
    from memory.facts import AsOf, facts_as_of, resolve_entity
    from memory.snapshots import list_snapshots

    con = Workspace.at(args.home).connect(read_only=True)
    snapshots = list_snapshots(con)
    if not args.collection and not snapshots:
        raise LookupError("no snapshot yet; run `kgmem build` or pass --collection")
    collection = args.collection or snapshots[0].collection
    entity_ids = resolve_entity(con, collection, args.entity)
    if not entity_ids:
        raise LookupError(f"no entity named {args.entity!r} in collection {collection!r}")
    rows = facts_as_of(
        con,
        collection,
        AsOf(args.valid_at, args.known_at),
        entity_ids=entity_ids,
        relation=args.relation,
        stable_only=args.stable_only,
    )
    if args.json:
        print(json.dumps(rows, indent=2, default=str))
        return 0
    table = Table(title=f"facts of {args.entity} in {collection}")
    for column in ("head", "relation", "tail", "valid from", "valid to", "conf", "recorded", "op"):
        table.add_column(column)
    for f in rows:
        table.add_row(
            f["head_name"],
            f["relation"],
            f["tail_name"],
            _day(f["valid_from"]) or "?",
            _day(f["valid_to"]) or "now",
            f"{f['confidence']:.2f}" + ("" if f["stable"] else " ~"),
            _day(f["recorded_from"]),
            f["operation"],
        )
    out.print(table)
    out.print("~ below θ_stable (0.8): kept, but left out of normal retrieval")
    return 0


def _entities(args: argparse.Namespace) -> int:
    from memory.entities import add_constraint, entity_links

    workspace = Workspace.at(args.home)
    if args.action == "show":
        links = entity_links(workspace.connect(read_only=True), args.collection, args.names[0])
        table = Table(title=f"entity of {args.names[0]!r} in {args.collection}")
        for column in ("entity", "name", "type", "mention key", "method", "score"):
            table.add_column(column)
        for link in links:
            table.add_row(
                *(
                    str(link[c])
                    for c in ("entity_id", "name", "entity_type", "norm_key", "method", "score")
                )
            )
        out.print(table)
        return 0
    if len(args.names) != 2:
        raise ValueError(f"{args.action} takes two names, got {len(args.names)}")
    kind = "cannot_link" if args.action == "split" else "must_link"
    add_constraint(workspace.connect(), args.collection, kind, *args.names)
    out.print(f"recorded {kind} {args.names[0]!r} / {args.names[1]!r}; the next build applies it")
    return 0


def _day(value: datetime | None) -> str | None:
    return value.date().isoformat() if value else None


def _snapshots(args: argparse.Namespace) -> int:
    from memory.snapshots import list_snapshots

    snapshots = list_snapshots(Workspace.at(args.home).connect(read_only=True), args.collection)
    if args.json:
        rows = [
            {
                **s.__dict__,
                "created_at": s.created_at.isoformat(),
                "recorded_cutoff": s.recorded_cutoff.isoformat(),
            }
            for s in snapshots
        ]
        print(json.dumps(rows, indent=2))
        return 0
    table = Table(title="snapshots")
    for column in ("snapshot", "collection", "created", "content hash", "counts"):
        table.add_column(column)
    for s in snapshots:
        counts = ", ".join(f"{k} {v}" for k, v in s.counts.items())
        table.add_row(
            s.snapshot_id,
            s.collection,
            s.created_at.isoformat(timespec="seconds"),
            s.content_hash[:16],
            counts,
        )
    out.print(table)
    return 0


def _ui(args: argparse.Namespace) -> int:
    from dagster_project.build import prepare_instance

    workspace = Workspace.at(args.home)
    os.environ[HOME_ENV] = str(workspace.root)
    prepare_instance(workspace)
    command = [
        sys.executable, "-m", "dagster_webserver",
        "-m", "dagster_project.definitions", "-h", "127.0.0.1", "-p", str(args.port),
    ]  # fmt: skip
    console.print(
        f"Dagster UI on http://127.0.0.1:{args.port} (workspace {workspace.root}); Ctrl-C stops it"
    )
    try:
        return subprocess.call(command)
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
