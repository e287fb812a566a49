"""`kgmem train relation-classifier`: fit the pair classifier on a Re-DocRED-layout file.

The model (a calibrated linear probe over MiniLM pair features, numbers only) is written to
`<home>/models/relation_classifier/<name>/` with its metadata (data hash, split, held-out
documents, metrics); later builds in that workspace run it beside the dependency patterns.
"""

from __future__ import annotations

import argparse
import json

from dagster_project.cli.common import add_home, out
from memory.workspace import Workspace


def add_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from transforms.relation_classifier.probe import DEFAULT_NAME

    train = commands.add_parser(
        "train", help="train the relation classifier", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    train.add_argument("model", choices=["relation-classifier"])
    train.add_argument("--dataset", required=True, help="Re-DocRED-layout JSON file")
    train.add_argument("--name", default=DEFAULT_NAME, help="artifact name")
    add_home(train)
    return train


def run(args: argparse.Namespace) -> int:
    from transforms.relation_classifier.probe import artifact_dir
    from transforms.relation_classifier.training import train_relation_classifier

    folder = artifact_dir(Workspace.at(args.home).root, args.name)
    metadata = train_relation_classifier(args.dataset, folder)
    out.print_json(json.dumps(metadata.get("metrics", metadata), default=str))
    out.print(f"model written to {folder}")
    return 0
