"""`kgmem entities`: show an entity's merges; split or merge entities for the next build."""

from __future__ import annotations

import argparse

from rich.table import Table

from kgmem.cli.common import add_home, out
from stores.workspace import Workspace

COLUMNS = ("entity_id", "name", "entity_type", "norm_key", "method", "score")


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    entities = commands.add_parser(
        "entities",
        help="show an entity's merges, or split / merge entities (the next build honours it)",
    )
    entities.add_argument("action", choices=["show", "split", "merge"])
    entities.add_argument("names", nargs="+", help="show: NAME; split / merge: NAME OTHER")
    entities.add_argument("--collection", required=True, help="collection name")
    add_home(entities)
    return entities


def run(args: argparse.Namespace) -> int:
    from memory.entities import add_constraint, entity_links

    workspace = Workspace.at(args.home)
    if args.action == "show":
        links = entity_links(workspace.connect(read_only=True), args.collection, args.names[0])
        table = Table(title=f"entity of {args.names[0]!r} in {args.collection}")
        for column in COLUMNS:
            table.add_column(column)
        for link in links:
            table.add_row(*(str(link[c]) for c in COLUMNS))
        out.print(table)
        return 0
    if len(args.names) != 2:
        raise ValueError(f"{args.action} takes two names, got {len(args.names)}")
    kind = "cannot_link" if args.action == "split" else "must_link"
    add_constraint(workspace.connect(), args.collection, kind, *args.names)
    out.print(f"recorded {kind} {args.names[0]!r} / {args.names[1]!r}; the next build applies it")
    return 0
