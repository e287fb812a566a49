"""`kgmem query`: ranked segments of a snapshot with provenance and supported facts."""

from __future__ import annotations

import argparse
import json

from kgmem.cli.common import add_data_url, add_home, add_strategy_options, out, timestamp
from memory.strategies.names import STRATEGY_NAMES


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    query = commands.add_parser("query", help="retrieve segments from a snapshot")
    query.add_argument("text", help="the query")
    query.add_argument("--snapshot", help="snapshot id (default: the newest)")
    query.add_argument(
        "--collection",
        help="newest snapshot of this collection (default: the workspace's only one; "
        "required with several)",
    )
    query.add_argument("--strategy", default="dense", choices=STRATEGY_NAMES)
    query.add_argument("-k", type=int, default=5, help="number of hits (default 5)")
    query.add_argument(
        "--unit",
        choices=["passage", "segment", "session"],
        default="passage",
        help="passage: k distinct documents or turns, each by its best segment (default); "
        "segment: k segments, several may come from one document; session: k distinct "
        "conversation sessions, each by its best turn, the supporting turns as evidence",
    )
    query.add_argument(
        "--reranker",
        metavar="MODEL_ID_OR_PATH",
        help="cross-encoder (sentence-transformers) that reorders the strategy's first "
        "passages (default: none)",
    )
    query.add_argument(
        "--rerank-depth",
        type=int,
        default=20,
        help="passages the reranker reorders (default 20)",
    )
    query.add_argument("--json", action="store_true", help="machine-readable output")
    query.add_argument("--explain", action="store_true", help="print the strategy's explanation")
    query.add_argument(
        "--valid-at", type=timestamp, help="reference time: facts valid then, no later segments"
    )
    add_strategy_options(query)
    add_home(query)
    add_data_url(query)
    return query


def run(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from memory.strategies.options import check_options
    from transforms.model_refs import check_hub_model

    if args.reranker:  # before the snapshot opens: a wrong model fails in a second
        check_hub_model("--reranker", args.reranker)
    check_options(args.strategy, dict(args.options))
    from memory import Memory
    from memory.answers import query_record
    from memory.explain import with_segment_heads

    with Memory.open(args.home, snapshot=args.snapshot, collection=args.collection) as memory:
        result = memory.query(
            args.text,
            strategy=args.strategy,
            k=args.k,
            valid_at=args.valid_at,
            unit=args.unit,
            reranker=args.reranker,
            rerank_depth=args.rerank_depth,
            options=dict(args.options),
        )
        collection = memory.snapshot.collection
        explanation = with_segment_heads(result.explanation, memory._view)
    if args.json:
        print(json.dumps(query_record(collection, result), indent=2, ensure_ascii=False))
        return 0
    out.print(
        f"[bold]{args.text}[/bold]  ({result.strategy}, collection {collection}, "
        f"snapshot {result.snapshot_id})"
    )
    if args.explain:
        out.print_json(data=explanation)
    for hit in result.hits:
        p = hit.provenance
        where = f"{p['title']} [{p['char_start']}:{p['char_end']}]"
        when = p["observed_at"] or "undated"
        who = f" {p['speaker']}, {p['turn_id']}" if p["speaker"] else ""
        out.print(f"{hit.rank}. ({hit.score:.4f}) [cyan]{where}[/cyan] {when}{who}")
        out.print(f"   {escape(hit.text)}", highlight=False)
        for fact in hit.facts:
            valid = f"{fact['valid_from'] or '?'} .. {fact['valid_to'] or 'now'}"
            reported = "  [yellow]reported speech: somebody's words, not the source's[/yellow]"
            out.print(
                f"   [green]fact[/green] {fact['head']} —{fact['relation']}→ {fact['tail']}"
                f"  (conf {fact['confidence']:.2f}, valid {valid})"
                + (reported if fact["reported"] else "")
            )
        for other in hit.evidence:
            out.print(
                f"   [dim]also in this passage: [{other['char_start']}:{other['char_end']}]"
                f" ({other['score']:.4f})[/dim]"
            )
        for path in hit.paths:
            out.print(f"   [magenta]path[/magenta] {escape(path)}", highlight=False)
        if args.explain and not hit.paths:
            out.print(f"   [dim]no path: {result.strategy} records none for this hit[/dim]")
    return 0
