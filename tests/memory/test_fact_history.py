"""Fact histories of the sample corpus, and as-of queries on both time axes."""

from datetime import UTC, datetime

import pytest

from memory.facts import is_speculative, resolve_entity
from stores.fact_queries import AsOf, facts_table_as_of


@pytest.fixture(scope="module")
def con(sample_build):
    workspace, _ = sample_build
    return workspace.connect(read_only=True)


def _history(con, entity: str, relation: str, as_of: AsOf | None = None) -> list[tuple]:
    ids = resolve_entity(con, "sample", entity)
    rows = facts_table_as_of(
        con, "sample", as_of or AsOf(), entity_ids=ids, relation=relation
    ).to_pylist()
    return [(r["tail_name"], _day(r["valid_from"]), _day(r["valid_to"])) for r in rows]


def _day(value: datetime | None) -> str | None:
    return value.date().isoformat() if value else None


def test_the_users_city_history(con):
    history = sorted(_history(con, "Sam Okafor", "live_in"), key=lambda r: r[1])
    assert history == [("Leeds", "2023-01-09", "2023-09-18"), ("Lisbon", "2023-09-18", None)]


def test_the_users_job_history(con):
    history = sorted(_history(con, "Sam Okafor", "work_at"), key=lambda r: r[1])
    assert history == [
        ("Brightwater Logistics", "2023-01-09", "2023-06-14"),
        ("Acme Corporation", "2023-06-14", None),
    ]


def test_as_of_valid_time_and_recorded_time(con):
    mid_2023 = datetime(2023, 7, 1, tzinfo=UTC)
    assert [r[0] for r in _history(con, "Sam Okafor", "live_in", AsOf(valid_at=mid_2023))] == [
        "Leeds"
    ]
    before_any_build = datetime(2000, 1, 1, tzinfo=UTC)
    assert _history(con, "Sam Okafor", "live_in", AsOf(known_at=before_any_build)) == []


def test_ceo_history_is_functional_on_the_company(con):
    rows = facts_table_as_of(
        con, "sample", AsOf(valid_at=datetime(2023, 1, 1, tzinfo=UTC)), relation="ceo_of"
    ).to_pylist()
    assert {(r["head_name"], r["tail_name"]) for r in rows} == {
        ("Marcus Bennett", "Acme Corporation")
    }


def test_speculative_queries():
    assert is_speculative("Where does Sam maybe live?")
    assert not is_speculative("Where does Sam live?")


def test_the_printers_error_states(con):
    history = sorted(_history(con, "Inkwell 3000", "has_error"), key=lambda r: r[1])
    assert history == [("E-42", "2024-02-05", "2024-02-12"), ("E-42", "2024-03-11", "2024-03-19")]
