"""`kgmem build` shows a running stage's rows done of total, and never an earlier run's."""

from __future__ import annotations

import os
import time

from kgmem.cli.build_cmd import StageWatcher
from transforms.progress import add_done, stage_progress_file, start_progress


def _wait_for(seen, text, seconds=5.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text in seen:
            return True
        time.sleep(0.1)
    return False


def test_a_running_stage_shows_rows_done_of_total(tmp_path):
    shown, logged = [], []
    files = lambda stage: stage_progress_file(tmp_path / stage)  # noqa: E731
    with StageWatcher(files, shown.append, logged.append) as watcher:
        watcher.watch("entity_mentions")
        start_progress(files("entity_mentions"), 5, "rows")
        add_done(files("entity_mentions"), 2)
        assert _wait_for(shown, "entity_mentions 2/5 rows")
        add_done(files("entity_mentions"), 3)
        assert _wait_for(shown, "entity_mentions 5/5 rows")
    assert shown[0] == "entity_mentions"
    assert logged == ["entity_mentions 2/5 rows"]  # then at most one line per 30 s


def test_an_earlier_runs_file_is_not_shown(tmp_path):
    path = stage_progress_file(tmp_path / "segment_phrases")
    start_progress(path, 9, "rows")
    add_done(path, 9)
    an_hour_ago = time.time() - 3600
    os.utime(path, (an_hour_ago, an_hour_ago))
    shown = []
    with StageWatcher(lambda stage: stage_progress_file(tmp_path / stage), shown.append, None) as w:
        w.watch("segment_phrases")  # skipped: unchanged input, no new file
        time.sleep(1.2)
    assert shown == ["segment_phrases"]
