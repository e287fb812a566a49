"""Opening a DuckDB file another process holds waits for the lock, up to the timeout."""

import subprocess
import sys
import time

import duckdb
import pytest

from transforms.duckdb_connect import connect_waiting

HOLD = (
    "import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); "
    "con.execute('CREATE TABLE IF NOT EXISTS t (x INT)'); print('held', flush=True); "
    "time.sleep(float(sys.argv[2])); con.close()"
)


def _holder(path, seconds):
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_waits_for_a_writer_in_another_process(tmp_path):
    path = tmp_path / "w.duckdb"
    proc = _holder(path, 2.0)
    started = time.monotonic()
    con = connect_waiting(path, timeout_s=30)
    assert time.monotonic() - started > 0.5
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(0,)]
    con.close()
    proc.wait()


def test_gives_up_after_the_timeout(tmp_path):
    path = tmp_path / "w.duckdb"
    proc = _holder(path, 5.0)
    with pytest.raises(duckdb.IOException, match=r"(?i)lock"):
        connect_waiting(path, timeout_s=0.3)
    proc.kill()
    proc.wait()


def test_a_long_wait_is_announced_once_naming_the_holder(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr("transforms.duckdb_connect.ANNOUNCE_AFTER_S", 0.2)
    path = tmp_path / "w.duckdb"
    proc = _holder(path, 1.5)
    with caplog.at_level("WARNING", logger="kgmem.locks"):
        connect_waiting(path, timeout_s=30).close()
    proc.wait()
    (record,) = caplog.records
    assert str(path) in record.getMessage() and f"PID {proc.pid}" in record.getMessage()
