"""The readers (`kgmem query`, `facts`, `snapshots`): they never answer from a collection the
user did not mean, and they need no write access to the workspace."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb

from kgmem.cli.app import main


def _add_collection(home: Path, name: str) -> None:
    """Record a snapshot of a second collection `name` (a copy of the newest row)."""
    with duckdb.connect(str(home / "warehouse.duckdb")) as con:
        con.execute(
            "INSERT INTO snapshots SELECT * REPLACE ('snap-' || ? AS snapshot_id, ? AS collection,"
            " now() + INTERVAL 1 HOUR AS created_at) FROM snapshots ORDER BY created_at DESC"
            " LIMIT 1",
            [name, name],
        )


def test_a_reader_with_several_collections_and_none_named_fails_listing_them(copied_home, capsys):
    _add_collection(copied_home, "zother")
    for argv in (["query", "Who is the CEO of Acme Corporation?"], ["facts", "Sam Okafor"]):
        assert main([*argv, "--home", str(copied_home)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, err
        assert "2 collections (sample, zother)" in err and "--collection" in err


def test_every_answer_header_names_its_collection(copied_home, capsys):
    argv = ["query", "Who is the CEO of Acme Corporation?", "--home", str(copied_home), "-k", "1"]
    assert main(argv) == 0
    assert "collection sample, snapshot snap-" in capsys.readouterr().out.splitlines()[0]
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["collection"] == "sample"
    _add_collection(copied_home, "zother")
    assert main([*argv, "--collection", "sample"]) == 0  # named: no ambiguity
    assert "collection sample," in capsys.readouterr().out


def _tree(home: Path) -> dict[str, tuple[int, int]]:
    return {
        str(path.relative_to(home)): (path.stat().st_mtime_ns, path.stat().st_size)
        for path in [home, *home.rglob("*")]
    }


READS = (
    ["snapshots"],
    ["query", "Who is the CEO of Acme Corporation?", "--strategy", "hybrid", "-k", "2"],
    ["query", "Where did Sam live?", "--strategy", "hipporag_ppr", "-k", "2"],
    ["facts", "Sam Okafor"],
    ["quarantine", "--collection", "sample"],
)


def _read_only_mount(source: Path, target: Path) -> bool:
    """Bind-mount `source` read-only at `target` (holds for root too); False where the
    process may not mount."""
    target.mkdir()
    done = subprocess.run(["mount", "--bind", "-o", "ro", str(source), str(target)],
                          capture_output=True)  # fmt: skip
    if done.returncode != 0:
        return False
    subprocess.run(["mount", "-o", "remount,ro,bind", str(target)], capture_output=True)
    probe = target / ".write-probe"
    try:
        probe.touch()
    except OSError:
        return True
    probe.unlink()
    subprocess.run(["umount", str(target)], check=True)
    return False


def test_readers_work_on_a_read_only_workspace_and_change_nothing(copied_home, tmp_path):
    kgmem = str(Path(sys.executable).parent / "kgmem")
    before = _tree(copied_home)
    mounted = tmp_path / "read_only"
    read_only = _read_only_mount(copied_home, mounted)
    home = mounted if read_only else copied_home
    if not read_only:  # not allowed to mount: the write bits at least (holds for non-root)
        for path in [copied_home, *copied_home.rglob("*")]:
            path.chmod(path.stat().st_mode & 0o555)
    try:
        for argv in READS:
            run = subprocess.run([kgmem, *argv, "--home", str(home)], capture_output=True,
                                 text=True, timeout=300)  # fmt: skip
            assert run.returncode == 0, (argv, run.stderr)
            assert "Traceback" not in run.stderr and "not writable" not in run.stderr
    finally:
        if read_only:
            subprocess.run(["umount", str(mounted)], check=True)
    assert _tree(copied_home) == before  # no log, lock, cache or WAL file left behind


def test_quarantine_lists_file_record_stage_and_reason(copied_home, capsys):
    with duckdb.connect(str(copied_home / "warehouse.duckdb")) as con:
        con.execute(
            "INSERT INTO quarantine VALUES ('sample', 'raw_documents', '/in/bad.json', "
            "'conversation c1 turn S1:2', 'turn has no speaker', '{}', now())"
        )
    assert main(["quarantine", "--json", "--collection", "sample", "--home", str(copied_home)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {
        "collection": "sample",
        "stage": "raw_documents",
        "source_file": "/in/bad.json",
        "record_ref": "conversation c1 turn S1:2",
        "reason": "turn has no speaker",
    }.items() <= next(r for r in rows if r["stage"] == "raw_documents").items()
    assert main(["quarantine", "--collection", "nosuch", "--home", str(copied_home)]) == 0
    assert "nothing quarantined in collection nosuch" in capsys.readouterr().out
