"""The workspace's settings file, `<home>/kgmem.toml`: what the launchpad sets, for the CLI.

Every field of `PipelineSettings` (the Dagster launchpad's `settings` resource) may be set
at the top level of the file, e.g.

    llm_backend = "openai"
    llm_model = "qwen2.5-7b-instruct"
    encoder_model = "packaged:multilingual-e5-small"
    chunk_tokens = 200

Precedence: a command-line flag beats the file, which beats the field's default. A key
that is no setting, a value of the wrong type, or a file that is no TOML is a one-line
error naming the file, the key and the reason, so a typo never silently falls back to a
default.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pydantic

from dagster_project.resources.settings import PipelineSettings

SETTINGS_FILE = "kgmem.toml"


def file_settings(home: Path, given: Path | None = None) -> dict[str, Any]:
    """The settings in the file `given` (`--settings`; it must exist), else in `home`'s
    settings file (none when it has no file), checked by name."""
    path = given or home / SETTINGS_FILE
    if given is not None and not given.is_file():
        raise ValueError(f"{given}: settings file not found")
    if not path.is_file():
        return {}
    try:
        values = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not valid TOML ({exc})") from exc
    known = PipelineSettings.model_fields
    for key in values:
        if key not in known:
            raise ValueError(f"{path}: {key!r} is not a setting (see `kgmem build --help`)")
    return values


def load_settings(
    home: Path, overrides: Mapping[str, Any] = {}, given: Path | None = None
) -> PipelineSettings:
    """`PipelineSettings` from the settings file `given`, else `home`'s, with `overrides`
    (command-line flags that were given) on top."""
    from_file = file_settings(home, given)
    try:
        return PipelineSettings(**{**from_file, **overrides})
    except pydantic.ValidationError as exc:
        error = exc.errors()[0]
        key = str(error["loc"][0]) if error["loc"] else "?"
        source = given or home / SETTINGS_FILE
        where = f"{source}: " if key in from_file and key not in overrides else ""
        raise ValueError(f"{where}setting {key!r}: {error['msg']}") from None
