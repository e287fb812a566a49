"""What the commands share: the consoles, the `--home` option, argument types, formatting."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from rich.console import Console

from stores.workspace import DATA_URL_ENV, HOME_ENV

console = Console(stderr=True)
out = Console(width=None if sys.stdout.isatty() else 140)  # piped: wide enough for bench tables


def add_home(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--home", help=f"workspace folder (default: ${HOME_ENV} or ./kgmem_home)")


def add_data_url(parser: argparse.ArgumentParser) -> None:
    """`--data-url`: `main` puts it in `$KGMEM_DATA_URL`, so every workspace the command
    opens (the build's stages, Dagster resources) resolves the same URL."""
    parser.add_argument(
        "--data-url",
        metavar="URL",
        help=f"where the shared data lives: s3://bucket/prefix or a shared folder (default: "
        f"${DATA_URL_ENV}, else what the workspace recorded, else the workspace folder); "
        "S3 access from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL, AWS_REGION",
    )


def add_strategy_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--option KEY=VALUE`, repeatable: options handed to the strategy (each strategy's
    module docstring lists the keys it reads; `kgmem query` refuses a key its strategy
    does not read and an invalid value: `memory.strategies.options`)."""
    parser.add_argument(
        "--option",
        dest="options",
        metavar="KEY=VALUE",
        type=strategy_option,
        action="append",
        default=[],
        help="strategy option, repeatable (e.g. --option vector_probes=0); VALUE is read as "
        "JSON where it parses (numbers, true/false), else as text",
    )


def strategy_option(text: str) -> tuple[str, Any]:
    """argparse type: KEY=VALUE as (key, value), VALUE parsed as JSON where it parses."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError:
        parsed = value
    return key.strip(), parsed


def timestamp(value: str) -> datetime:
    """argparse type: an ISO-8601 date or date-time (UTC if naive)."""
    from transforms.timeparse import parse_time

    try:
        return parse_time(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def day(value: datetime | None) -> str | None:
    return value.date().isoformat() if value else None


LOG_FILE = "logs/kgmem.log"
"""Where the CLI writes library warnings, under the workspace."""


class _LazyFileHandler(logging.FileHandler):
    """A file handler that creates its file, and its folder, at the first record only, so a
    command that logs nothing leaves no trace in the workspace."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, encoding="utf-8", delay=True)
        self.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))

    def _open(self) -> TextIO:
        """The log file, or, in a workspace that cannot be written (a read-only copy that a
        query host mounts), a sink that drops the records: never the terminal."""
        try:
            Path(self.baseFilename).parent.mkdir(parents=True, exist_ok=True)
            return super()._open()
        except OSError:
            return open(os.devnull, "w", encoding="utf-8")  # the handler closes it


def route_library_logs(home: Path, verbose: bool) -> Path:
    """Send library log records and Python warnings to `<home>/logs/kgmem.log` instead of
    the terminal (Beam's "apitools not found", Lance and Dagster warnings); with `verbose`
    they also go to stderr. kgmem's own warnings (`kgmem.*`, e.g. a build waiting for a
    locked file) always reach stderr. Returns the log file."""
    path = home / LOG_FILE
    root = logging.getLogger()
    root.handlers[:] = [_LazyFileHandler(path)]
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    own = logging.getLogger("kgmem")
    if verbose:
        root.addHandler(logging.StreamHandler(sys.stderr))
        own.handlers[:] = []
    else:
        own.handlers[:] = [logging.StreamHandler(sys.stderr)]
    logging.captureWarnings(True)
    os.environ.setdefault("LANCEDB_LOG", "error")  # LanceDB's Rust logger: errors only
    return path


INTERRUPTED = 130
"""Exit status of a command stopped by Ctrl-C (SIGINT), as a shell reports it (128 + 2)."""
FAILED = 2
"""Exit status of every other failure: a bad argument, input, setting or model, a stage
that failed; `--debug` keeps it, with the traceback printed."""
_USER_ERRORS = (OSError, LookupError, ValueError)
"""What a wrong argument, path, setting or model raises: the message says it all."""
_OWN_PACKAGES = frozenset(
    {"kgmem", "dagster_project", "pipelines", "stores", "transforms", "memory", "benchmarks"}
)
"""Packages whose exceptions (a failed build stage, say) carry messages written for the user."""


def report_error(exc: BaseException, debug: bool) -> int:
    """Print `exc` as one line (its traceback with `debug`) and return `FAILED`.

    A user error (`_USER_ERRORS`, or an exception of kgmem's own) is its message's first
    line; anything else is its type and that line, with the traceback in the log file
    (`route_library_logs`), so the terminal never gets a library's hundreds of lines but
    the cause is kept."""
    from rich.markup import escape

    if debug:
        import traceback

        traceback.print_exception(exc)
        return FAILED
    message = (str(exc).strip() or type(exc).__name__).splitlines()[0]
    own = type(exc).__module__.split(".")[0] in _OWN_PACKAGES
    if not isinstance(exc, _USER_ERRORS) and not own:
        message = f"{type(exc).__name__}: {message}"
        if logging.getLogger().handlers:  # the workspace's log file: not the kgmem.* stderr
            logging.getLogger().error("command failed", exc_info=exc)
            message += f" (details in {LOG_FILE} of the workspace)"
    console.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True, highlight=False)
    return FAILED
