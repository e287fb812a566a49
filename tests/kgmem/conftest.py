"""Fixtures of the command-line tests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture
def copied_home(sample_build, tmp_path) -> Path:
    """A copy of the sample build's workspace (its logs and locks left out), for a test that
    changes it or checks what a command changes in it."""
    workspace, _ = sample_build
    home = tmp_path / "home"
    shutil.copytree(workspace.root, home, ignore=shutil.ignore_patterns("logs", "*.lock"))
    return home
