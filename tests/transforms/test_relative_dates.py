"""Relative dates resolved against the day a turn was said."""

from datetime import date

import pytest

from transforms.relative_dates import relative_date_nodes

SAID = date(2023, 5, 10)  # a Wednesday, ISO week 19


@pytest.mark.parametrize(
    ("text", "node"),
    [
        ("I went there yesterday.", "day:2023-05-09"),
        ("The day before yesterday was fun", "day:2023-05-08"),
        ("see you tomorrow", "day:2023-05-11"),
        ("We met 3 days ago", "day:2023-05-07"),
        ("we went camping two weekends ago", "week:2023-W17"),
        ("last Tuesday I joined a group", "day:2023-05-09"),
        ("last Wednesday", "day:2023-05-03"),
        ("next Wednesday", "day:2023-05-17"),
        ("this Friday", "day:2023-05-12"),
        ("I ran on Sunday", "day:2023-05-07"),
        ("last Tues. I joined", "day:2023-05-09"),
        ("Last week I went to a parade", "week:2023-W18"),
        ("this weekend", "week:2023-W19"),
        ("a couple of weeks ago", "week:2023-W17"),
        ("next month", "month:2023-06"),
        ("two months ago", "month:2023-03"),
    ],
)
def test_resolves_each_form(text: str, node: str | None) -> None:
    assert relative_date_nodes(text, SAID) == ({node} if node else set())


def test_month_arithmetic_crosses_years() -> None:
    assert relative_date_nodes("last month", date(2024, 1, 15)) == {"month:2023-12"}
    assert relative_date_nodes("11 months ago", date(2024, 1, 15)) == {"month:2023-02"}


def test_a_phrase_resolves_once_and_words_inside_others_do_not_match() -> None:
    # "last Sunday" is one day; its "Sunday" is not read again as "on Sunday"
    assert relative_date_nodes("Monday-ish? Last Sunday, and yesterday", SAID) == {
        "day:2023-05-07",
        "day:2023-05-09",
    }
    assert relative_date_nodes("the sunday school and todays paper", SAID) == set()
