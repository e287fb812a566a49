"""What the commands share: the consoles, the `--home` option, argument types, formatting."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from rich.console import Console

from memory.workspace import HOME_ENV

console = Console(stderr=True)
out = Console(width=None if sys.stdout.isatty() else 140)  # piped: wide enough for bench tables


def add_home(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", help=f"workspace folder (default: ${HOME_ENV} or ./kgmem_home)")


def timestamp(value: str) -> datetime:
    """argparse type: an ISO-8601 date or date-time (UTC if naive)."""
    from transforms.timeparse import parse_time

    try:
        return parse_time(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def day(value: datetime | None) -> str | None:
    return value.date().isoformat() if value else None
