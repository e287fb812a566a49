"""The time span a text talks about, from the years it mentions.

A segment is observed at one time (its document's date, its turn's timestamp) but may
describe another ("Baker was Secretary of War during 1916-1920"). The span of the years
it mentions, `[first year's 1 January, last year's 31 December]`, lets retrieval at a
reference time prefer segments about that time. Years are four-digit numbers from 1000
to 2099 standing alone (not part of a longer number, a code or a decimal); decade forms
("the 1990s") count as the decade. Months and days are not parsed: a year is the
granularity TimeQA-style questions use, and a finer one would add errors for little.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

_YEAR = re.compile(r"(?<![\w.,])(?<![A-Za-z]-)(1\d{3}|20\d{2})(s)?(?!\w|[.,]\d)")


def mentioned_years(text: str) -> list[int]:
    """Years mentioned in `text`, in order; a decade adds its last year too."""
    years: list[int] = []
    for match in _YEAR.finditer(text):
        year = int(match.group(1))
        years.extend([year, year + 9] if match.group(2) else [year])
    return years


def mentioned_span(text: str) -> tuple[datetime | None, datetime | None]:
    """(start, end) of the years `text` mentions, or (None, None) if it mentions none."""
    years = mentioned_years(text)
    if not years:
        return None, None
    return datetime(min(years), 1, 1, tzinfo=UTC), datetime(
        max(years), 12, 31, 23, 59, 59, tzinfo=UTC
    )


def reference_time(question: str) -> datetime | None:
    """The valid time a time-constrained question asks about: the middle of the years it
    names ("from 1811 to 1827" -> mid 1819; "in 1995" -> mid 1995), None if it names none."""
    years = mentioned_years(question)
    if not years:
        return None
    start, end = min(years), max(years)
    return datetime((start + end) // 2, 7, 1, tzinfo=UTC)
