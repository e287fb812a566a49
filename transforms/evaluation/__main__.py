"""Command line of the extraction evaluation (until `kgmem eval extraction` wires it).

    python -m transforms.evaluation extraction --dataset PATH [--json] [--limit N]
    python -m transforms.evaluation window-recall --dataset PATH [--json]

PATH is a Re-DocRED-layout file, e.g. ../shared/data/redocred/dev_revised.json.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from transforms.evaluation.report import evaluate_extraction
from transforms.evaluation.window_recall import window_recall
from transforms.redocred import load_redocred
from transforms.relation_classifier.probe import DEFAULT_NAME, ProbeBackend, find_artifact
from transforms.spacy_models import DEFAULT_SPACY_MODEL


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the arguments and print the report as a table or JSON."""
    parser = argparse.ArgumentParser(prog="python -m transforms.evaluation")
    parser.add_argument("command", choices=["extraction", "window-recall"])
    parser.add_argument("--dataset", required=True, help="Re-DocRED-layout JSON file")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--limit", type=int, default=None, help="first N documents only")
    parser.add_argument("--spacy-model", default=DEFAULT_SPACY_MODEL)
    parser.add_argument("--home", default=None, help="workspace with the classifier artifact")
    parser.add_argument("--classifier", default=DEFAULT_NAME, help="artifact name or folder")
    args = parser.parse_args(argv)
    if args.command == "window-recall":
        rows = [r.to_dict() for r in window_recall(load_redocred(args.dataset)[: args.limit])]
        print(json.dumps(rows, indent=2) if args.json else _recall_table(rows))
        return
    report = evaluate_extraction(
        args.dataset, args.spacy_model, _classifier(args.home, args.classifier), limit=args.limit
    )
    print(json.dumps(report.to_dict(), indent=2) if args.json else report.table())


def _classifier(home: str | None, name: str) -> ProbeBackend | None:
    from memory.workspace import default_home

    folder = find_artifact(home or default_home(), name)
    return ProbeBackend(folder) if folder else None


def _recall_table(rows: list[dict]) -> str:
    lines = [f"{'W':>6}{'recall':>10}{'in chunk':>10}{'mention pairs':>15}"]
    for r in rows:
        window = "any" if r["window"] is None else str(r["window"])
        lines.append(
            f"{window:>6}{r['recall']:>10.3f}{r['recall_in_chunk']:>10.3f}{r['mention_pairs']:>15}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
