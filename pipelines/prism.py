"""Where a Prism runner binary can be found without a network.

Beam's `PrismRunner` starts a Go binary, `prism`, that Beam does not ship in its wheel: at
first use it downloads `apache_beam-v<version>-prism-<os>-<arch>.zip` from the Beam GitHub
release into `~/.apache_beam/cache/prism/bin` (or builds it with `go install` for a dev
version). `--prism_location=PATH` names a local binary or zip instead. `offline_prism_binary`
says which of these is already on disk, so callers (tests, error messages) can tell an
offline machine from a broken runner.
"""

from __future__ import annotations

import platform
from collections.abc import Sequence
from pathlib import Path

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions, PrismRunnerOptions
from apache_beam.runners.portability.prism_runner import PrismJobServer


def prism_release_name() -> str:
    """`apache_beam-v<version>-prism-<os>-<arch>`, the release asset Beam would download."""
    # Beam's own naming rule (a private helper of the runner in Beam 2.77).
    url = PrismJobServer._construct_download_url(
        f"v{beam.__version__}", f"v{beam.__version__}", platform.system(), platform.machine()
    )
    return Path(url).stem


def offline_prism_binary(flags: Sequence[str] = ()) -> Path | None:
    """The Prism binary (or zip) `PrismRunner` would use with `flags` without downloading:
    `--prism_location` when it is a local file, else the cached release for this Beam
    version; None when neither exists (Prism would need GitHub)."""
    location = PipelineOptions(list(flags)).view_as(PrismRunnerOptions).prism_location
    if location:
        path = Path(location)
        return path if path.is_file() else None
    cache = Path(PrismJobServer.BIN_CACHE)
    name = prism_release_name()
    for candidate in (cache / name, cache / f"{name}.zip"):
        if candidate.is_file():
            return candidate
    return None
