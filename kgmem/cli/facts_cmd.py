"""`kgmem facts`: an entity's fact history, as of a valid time and a recorded time."""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from kgmem.cli.common import add_home, day, out, timestamp
from stores.workspace import Workspace


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    facts = commands.add_parser(
        "facts", help="fact history of an entity, as-of on valid and recorded time"
    )
    facts.add_argument("entity", help="entity name or alias, e.g. 'Sam Okafor'")
    facts.add_argument(
        "--collection", help="collection (default: the workspace's only one; required with several)"
    )
    facts.add_argument("--valid-at", type=timestamp, help="only facts true at this time")
    facts.add_argument("--known-at", type=timestamp, help="as the memory believed at this time")
    facts.add_argument("--relation", help="only this relation, e.g. live_in")
    facts.add_argument("--stable-only", action="store_true", help="only confidence >= 0.8")
    facts.add_argument("--json", action="store_true", help="machine-readable output")
    add_home(facts)
    return facts


def run(args: argparse.Namespace) -> int:
    from memory.answers import entity_facts, plain
    from stores.fact_queries import AsOf
    from stores.snapshots import list_snapshots, reader_collection

    con = Workspace.at(args.home).connect(read_only=True)
    snapshots = list_snapshots(con)
    collection = reader_collection(snapshots, args.collection, Workspace.at(args.home).root)
    as_of = AsOf(args.valid_at, args.known_at)
    rows = entity_facts(con, collection, args.entity, as_of, args.relation, args.stable_only)
    if args.json:
        print(json.dumps(plain(rows), indent=2))
        return 0
    if not rows:
        out.print(no_facts_sentence(args, collection))
        return 0
    table = Table(title=f"facts of {args.entity} in {collection}")
    for column in ("head", "relation", "tail", "valid from", "valid to", "conf", "recorded", "op"):
        table.add_column(column)
    for f in rows:
        table.add_row(
            f["head_name"],
            f["relation"],
            f["tail_name"],
            day(f["valid_from"]) or "?",
            day(f["valid_to"]) or "now",
            f"{f['confidence']:.2f}" + ("" if f["stable"] else " ~"),
            day(f["recorded_from"]),
            f["operation"],
        )
    out.print(table)
    out.print("~ below θ_stable (0.8): kept, but left out of normal retrieval")
    return 0


def no_facts_sentence(args: argparse.Namespace, collection: str) -> str:
    """What `kgmem facts` says when the entity exists but no fact matches: which entity,
    collection and filters, so that an empty answer is not mistaken for a failed one."""
    filters = [
        f"relation {args.relation}" if args.relation else "",
        f"valid at {args.valid_at.isoformat()}" if args.valid_at else "",
        f"known at {args.known_at.isoformat()}" if args.known_at else "",
        "stable only" if args.stable_only else "",
    ]
    where = "; ".join(f for f in filters if f)
    return f"{args.entity} is an entity of {collection} but has no facts" + (
        f" ({where})." if where else "."
    )
