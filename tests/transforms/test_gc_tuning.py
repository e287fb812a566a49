"""The garbage collector's thresholds: kgmem's by default, the environment's where given,
and a clear error for a malformed setting (also from the CLI, as one line)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from kgmem.cli import main
from transforms.gc_tuning import ENV, THRESHOLDS, tune_gc


@pytest.fixture(autouse=True)
def restored_thresholds() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_the_default_and_an_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    gc.set_threshold(700, 10, 10)
    assert tune_gc() == THRESHOLDS == gc.get_threshold()
    monkeypatch.setenv(ENV, "700,10,10")
    assert tune_gc() == (700, 10, 10)
    monkeypatch.setenv(ENV, " 2000 ")
    assert tune_gc() == (2000, 10, 10)


@pytest.mark.parametrize("value", ["a,b", "1,2,3,4", "-1", "1,,2"])
def test_a_malformed_setting_is_refused_by_name(monkeypatch, capsys, value: str) -> None:
    monkeypatch.setenv(ENV, value)
    with pytest.raises(ValueError, match=ENV):
        tune_gc()
    assert main(["snapshots", "--home", "/nonexistent/kgmem"]) == 2
    err = capsys.readouterr().err
    assert ENV in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
