"""Scheduling and backfills: the inbox sensor, the nightly schedule, day partitions, the
partitioned build job, and `kgmem backfill` (resumable, and equal memory to one-by-one
builds: the resumed backfill, which builds one partition at a time, is the reference)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import dagster as dg
import pytest

from dagster_project.automation.days import parse_day_collection, select_days, split_by_day
from dagster_project.automation.fingerprints import (
    BUILT_STAGE,
    FINGERPRINT_TAG,
    inputs_fingerprint,
    last_built,
    record_built,
)
from dagster_project.automation.inbox import DAILY_MARKER, parse_cursor
from dagster_project.automation.schedules import nightly_schedule
from dagster_project.automation.sensors import collection_inbox, record_completed_builds
from dagster_project.definitions import kgmem_definitions
from dagster_project.partitions import collections_partitions
from dagster_project.resources import PipelineSettings, WarehouseResource
from kgmem.cli.app import main
from stores.workspace import Workspace
from tests.conftest import SAMPLE

defs = kgmem_definitions()

DOCS = SAMPLE / "documents"
CONVERSATION = SAMPLE / "conversations" / "personal_assistant.json"
A_FILES = ["2022-03-01-inkwell-3000-price-cut.md", "2019-05-20-tonerline-500-launch.md"]
B_FILES = ["2022-07-01-marcus-bennett-ceo.md", "2022-02-21-tonerline-500-discontinued.md"]
NO_LLM = PipelineSettings(llm_backend="none")


def _folder(root: Path, files: list[str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name in files:
        shutil.copy(DOCS / name, root / name)
    return root


def _sense(instance: dg.DagsterInstance, warehouse: WarehouseResource, cursor: str | None):
    with dg.build_sensor_context(
        instance=instance, cursor=cursor, resources={"warehouse": warehouse}
    ) as context:
        result = collection_inbox(context)
    for request in result.dynamic_partitions_requests or []:
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
    return result


def test_inbox_sensor_registers_partitions_and_requests_only_changed(tmp_path, monkeypatch):
    inbox = tmp_path / "inbox"
    monkeypatch.setenv("KGMEM_INBOX", str(inbox))
    alpha = _folder(inbox / "alpha", A_FILES)
    _folder(inbox / "Bad Name", A_FILES[:1])
    (inbox / "empty").mkdir()
    warehouse = WarehouseResource(root=str(tmp_path / "home"))
    with dg.instance_for_test() as instance:
        first = _sense(instance, warehouse, None)
        assert [r.partition_key for r in first.run_requests] == ["alpha"]
        assert first.run_requests[0].tags[FINGERPRINT_TAG] == inputs_fingerprint([alpha])
        assert instance.get_dynamic_partitions(collections_partitions.name) == ["alpha"]
        assert warehouse.inputs_of("alpha") == [str(alpha.resolve())]
        assert parse_cursor(first.cursor) == {"alpha": inputs_fingerprint([alpha])}

        second = _sense(instance, warehouse, first.cursor)
        assert second.run_requests == []
        skipped = second.skip_reason.skip_message
        assert "Bad Name" in skipped and "invalid collection name" in skipped

        (alpha / A_FILES[0]).write_text("Acme cut the Inkwell 3000 price again.\n")
        beta = _folder(inbox / "beta", B_FILES)
        third = _sense(instance, warehouse, second.cursor)
        assert sorted(r.partition_key for r in third.run_requests) == ["alpha", "beta"]
        assert sorted(instance.get_dynamic_partitions(collections_partitions.name)) == [
            "alpha",
            "beta",
        ]
        assert warehouse.inputs_of("beta") == [str(beta.resolve())]
        assert _sense(instance, warehouse, third.cursor).run_requests == []


def test_daily_inbox_folder_becomes_day_partitions(tmp_path, monkeypatch):
    inbox = tmp_path / "inbox"
    monkeypatch.setenv("KGMEM_INBOX", str(inbox))
    chat = inbox / "chat"
    chat.mkdir(parents=True)
    shutil.copy(CONVERSATION, chat / CONVERSATION.name)
    (chat / DAILY_MARKER).touch()
    warehouse = WarehouseResource(root=str(tmp_path / "home"))
    days = sorted({t["timestamp"][:10] for s in _sessions() for t in s["turns"]})
    with dg.instance_for_test() as instance:
        first = _sense(instance, warehouse, None)
        expected = [f"chat-{d}" for d in days]
        assert sorted(r.partition_key for r in first.run_requests) == expected
        assert sorted(instance.get_dynamic_partitions(collections_partitions.name)) == expected
        assert _sense(instance, warehouse, first.cursor).run_requests == []


def _sessions() -> list[dict]:
    return json.loads(CONVERSATION.read_text())["sessions"]


def test_split_by_day_keeps_turns_and_rewrites_only_changed_days(tmp_path):
    source = tmp_path / "log"
    source.mkdir()
    shutil.copy(CONVERSATION, source / CONVERSATION.name)
    split = split_by_day("chat", [source], tmp_path / "days")
    turns = {(t["turn_id"], t["text"]) for s in _sessions() for t in s["turns"]}
    written = set()
    for day, folder in split.days.items():
        for file in folder.glob("*.json"):
            for session in json.loads(file.read_text())["sessions"]:
                assert all(t["timestamp"].startswith(day) for t in session["turns"])
                written |= {(t["turn_id"], t["text"]) for t in session["turns"]}
    assert written == turns and len(split.days) > 1
    before = {d: inputs_fingerprint([f]) for d, f in split.days.items()}
    log = json.loads(CONVERSATION.read_text())
    log["sessions"][-1]["turns"][0]["text"] += " Also, I adopted a cat."
    (source / CONVERSATION.name).write_text(json.dumps(log))
    after = split_by_day("chat", [source], tmp_path / "days")
    changed = {d for d, f in after.days.items() if inputs_fingerprint([f]) != before[d]}
    last_day = log["sessions"][-1]["turns"][0]["timestamp"][:10]
    assert changed == {last_day}


def test_day_partition_names_and_range_selection():
    names = ["chat-2023-01-09", "chat-2023-02-01", "other-2023-01-10", "plain", "x-2023-13-01"]
    assert parse_day_collection("chat-2023-01-09") == ("chat", date(2023, 1, 9))
    assert parse_day_collection("x-2023-13-01") is None
    assert select_days(names, date(2023, 1, 1), date(2023, 1, 31)) == [
        "chat-2023-01-09",
        "other-2023-01-10",
    ]
    assert select_days(names, date(2023, 1, 1), date(2023, 12, 31), "chat") == [
        "chat-2023-01-09",
        "chat-2023-02-01",
    ]


def test_nightly_schedule_selects_only_changed_collections(tmp_path):
    warehouse = WarehouseResource(root=str(tmp_path / "home"))
    a, b = _folder(tmp_path / "a", A_FILES), _folder(tmp_path / "b", B_FILES)
    for name, folder in (("a", a), ("b", b), ("gone", tmp_path / "missing")):
        warehouse.register_collection(name, [str(folder)])
    record_built(warehouse, "a", inputs_fingerprint([a]))
    schedule = nightly_schedule(cron="30 3 * * *")
    assert schedule.cron_schedule == "30 3 * * *"
    assert nightly_schedule().cron_schedule == "0 2 * * *"
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(collections_partitions.name, ["a", "b", "gone"])

        def tick():
            with dg.build_schedule_context(
                instance=instance, resources={"warehouse": warehouse}
            ) as context:
                return schedule(context)

        assert [r.partition_key for r in tick()] == ["b"]
        record_built(warehouse, "b", inputs_fingerprint([b]))
        skipped = tick()
        assert isinstance(skipped, dg.SkipReason) and "changed" in skipped.skip_message
        (a / "new.md").write_text("# Note\n\nAcme opened a lab in Delft.\n")
        requests = tick()
        assert [r.partition_key for r in requests] == ["a"]
        assert requests[0].tags[FINGERPRINT_TAG] == inputs_fingerprint([a])


def test_partitioned_build_job_runs_a_partition_and_records_its_build(tmp_path):
    job = defs.resolve_job_def("build_collection")
    assert job.partitions_def == collections_partitions
    keys = {k.to_user_string() for k in job.asset_layer.selected_asset_keys}
    assert {"raw_documents", "memory_snapshot"} <= keys
    assert not {"temporal_evaluation", "extraction_evaluation"} & keys
    folder = _folder(tmp_path / "docs", A_FILES)
    warehouse = WarehouseResource(root=str(tmp_path / "home"))
    warehouse.register_collection("jobpart", [str(folder)])
    fingerprint = inputs_fingerprint([folder])
    instance = dg.DagsterInstance.get()
    instance.add_dynamic_partitions(collections_partitions.name, ["jobpart"])
    result = job.execute_in_process(
        partition_key="jobpart",
        instance=instance,
        resources={"warehouse": warehouse, "settings": NO_LLM},
        tags={FINGERPRINT_TAG: fingerprint},
    )
    assert result.success
    snapshots = warehouse.rows("SELECT * FROM snapshots WHERE collection = 'jobpart'")
    assert len(snapshots) == 1
    assert last_built(warehouse, "jobpart") is None
    with dg.build_run_status_sensor_context(
        sensor_name="record_completed_builds",
        dagster_instance=instance,
        dagster_run=result.dagster_run,
        dagster_event=result.get_run_success_event(),
        resources={"warehouse": warehouse},
    ) as context:
        record_completed_builds(context)
    assert last_built(warehouse, "jobpart") == fingerprint


def _content_hashes(root: Path) -> dict[str, str]:
    con = Workspace.at(root).connect(read_only=True)
    try:
        rows = con.execute(
            "SELECT collection, content_hash FROM snapshots ORDER BY created_at"
        ).fetchall()
    finally:
        con.close()
    return dict(rows)


def _register(root: Path, inputs: dict[str, Path]) -> WarehouseResource:
    warehouse = WarehouseResource(root=str(root))
    for name, folder in inputs.items():
        warehouse.register_collection(name, [str(folder)])
    dg.DagsterInstance.get().add_dynamic_partitions(collections_partitions.name, list(inputs))
    return warehouse


def _runs_of(collection: str) -> int:
    return len(
        dg.DagsterInstance.get().get_runs(dg.RunsFilter(tags={"kgmem/collection": collection}))
    )


@dataclass(frozen=True)
class ResumedBackfill:
    """A backfill of bfa and bfb, one partition at a time in this process, whose first run
    finds bfb's input folder missing and whose second run finds it there."""

    source: Path
    warehouse: WarehouseResource
    first_err: str
    second_err: str
    first_code: int
    second_code: int
    last_built_after_failure: tuple[str | None, str | None]
    ledger_before: list[str]
    ledger_after: list[str]
    runs_before: tuple[int, int]
    runs_after: tuple[int, int]
    hashes: dict[str, str]


LEDGER_SQL = "SELECT stage, doc_id, processed_at FROM stage_ledger WHERE collection = 'bfa'"


def _backfill(argv: list[str]) -> tuple[int, str]:
    """`kgmem backfill`'s exit code and what it printed on stderr."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


@pytest.fixture(scope="module")
def resumed(tmp_path_factory) -> ResumedBackfill:
    """The one-by-one builds that the concurrent backfill is compared with: each partition
    is built alone, after the other, and bfb only once its input exists."""
    tmp = tmp_path_factory.mktemp("resumed")
    source = tmp / "source"
    _folder(source / "a", A_FILES)
    _folder(source / "b", B_FILES)
    home, late = tmp / "home", tmp / "late"
    warehouse = _register(home, {"bfa": source / "a", "bfb": late})
    argv = ["backfill", "--collections", "bfa,bfb", "--llm-backend", "none", "--home", str(home)]
    first_code, first_err = _backfill(argv)
    built_after_failure = last_built(warehouse, "bfa"), last_built(warehouse, "bfb")
    ledger_before = sorted(map(str, warehouse.rows(LEDGER_SQL)))
    runs_before = _runs_of("bfa"), _runs_of("bfb")
    shutil.copytree(source / "b", late)
    second_code, second_err = _backfill(argv)
    return ResumedBackfill(
        source=source,
        warehouse=warehouse,
        first_err=first_err,
        second_err=second_err,
        first_code=first_code,
        second_code=second_code,
        last_built_after_failure=built_after_failure,
        ledger_before=ledger_before,
        ledger_after=sorted(map(str, warehouse.rows(LEDGER_SQL))),
        runs_before=runs_before,
        runs_after=(_runs_of("bfa"), _runs_of("bfb")),
        hashes=_content_hashes(home),
    )


@pytest.mark.slow
def test_backfill_resumes_after_a_failed_partition_without_redoing_finished_ones(
    resumed: ResumedBackfill,
):
    assert resumed.first_code == 1
    assert "bfa: built" in resumed.first_err and "bfb: failed" in resumed.first_err
    bfa_built, bfb_built = resumed.last_built_after_failure
    assert bfa_built is not None and bfb_built is None
    assert resumed.second_code == 0
    assert "bfa: skipped (done)" in resumed.second_err and "bfb: built" in resumed.second_err
    assert resumed.runs_after[0] == resumed.runs_before[0], "the finished partition ran again"
    assert resumed.runs_after[1] > resumed.runs_before[1]
    assert resumed.ledger_after == resumed.ledger_before
    state = resumed.warehouse.rows(
        "SELECT collection FROM stage_state WHERE stage = ? ORDER BY collection", [BUILT_STAGE]
    )
    assert [r["collection"] for r in state] == ["bfa", "bfb"]
    assert set(resumed.hashes) == {"bfa", "bfb"}


@pytest.mark.slow
def test_concurrent_backfill_equals_one_by_one_builds(resumed: ResumedBackfill, tmp_path, capfd):
    home = tmp_path / "home"
    _register(home, {"bfa": resumed.source / "a", "bfb": resumed.source / "b"})
    argv = ["backfill", "--collections", "bfa,bfb", "--max-concurrent", "2"]
    assert main([*argv, "--llm-backend", "none", "--home", str(home)]) == 0
    err = capfd.readouterr().err  # the worker processes' output too
    assert "apitools" not in err and "great_expectations" not in err, "library noise"
    assert _content_hashes(home) == resumed.hashes
    assert dg.DagsterInstance.get().event_log_storage.get_concurrency_info("llm").slot_count == 1
    assert main([*argv, "--llm-backend", "none", "--home", str(home)]) == 0
    err = capfd.readouterr().err
    assert "bfa: skipped (done)" in err and "bfb: skipped (done)" in err


@pytest.mark.slow
def test_backfill_of_a_day_range_splits_and_builds_only_those_days(tmp_path, capsys):
    log = tmp_path / "log"
    log.mkdir()
    shutil.copy(CONVERSATION, log / CONVERSATION.name)
    home = tmp_path / "home"
    warehouse = _register(home, {"chatlog": log})
    first_day = min(t["timestamp"][:10] for s in _sessions() for t in s["turns"])
    argv = ["backfill", "--from", first_day, "--to", first_day, "--split", "chatlog"]
    assert main([*argv, "--llm-backend", "none", "--home", str(home)]) == 0
    assert f"chatlog-{first_day}: built" in capsys.readouterr().err
    days = [r["name"] for r in warehouse.rows("SELECT name FROM collections ORDER BY name")]
    assert days == ["chatlog", f"chatlog-{first_day}"]
    assert set(_content_hashes(home)) == {f"chatlog-{first_day}"}
