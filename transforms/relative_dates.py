"""Relative dates in a turn ("yesterday", "last Tuesday", "two weeks ago"), resolved
against the date the turn was said, as the day, week or month nodes of the memory graph.

MemORAI's provenance graph carries session dates; conversation memory also needs the
dates a turn *talks about*: "I went to a pride parade last week", said on 15 May, is about
the week of 8 May, which another session may have been held in or spoken of. The paper
does not say how; chosen here, by rule and with no model:

- a day: "today", "tonight", "yesterday", "tomorrow", "the day before yesterday", "N days
  ago", "last/this/next <weekday>" (last = the most recent such day strictly before the
  reference day, next = the first strictly after, this = the one in the reference week),
  and a bare "on <weekday>" (the most recent one, as a past-tense narrative means);
- a week (ISO week `week:<YYYY>-W<ww>`): "last/this/next week", "last weekend",
  "this weekend", "N weeks ago", "N weekends ago";
- a month (`month:<YYYY>-<MM>`): "last/this/next month", "N months ago";
- numbers as digits or words up to twelve ("a", "a couple of" = 1, 2).

Days are the `day:<YYYY-MM-DD>` nodes a turn's own date links to (`transforms.graph_nodes`),
so a turn that says "yesterday" meets the turns said that day. Weeks and months are nodes
of their own that only such phrases link to: a session date is not linked to its week,
so that a week node joins the turns that talk about the same week and nothing else.
Absolute dates ("on 8 May") and vaguer phrases ("recently", "a while ago") are not resolved.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_FORMS = (
    {name: i for i, name in enumerate(WEEKDAYS)}
    | {name[:3]: i for i, name in enumerate(WEEKDAYS)}
    | {"tues": 1, "thur": 3, "thurs": 3}
)
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "a couple of": 2,
    "couple of": 2,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
_NUMBER = r"(\d{1,2}|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) + ")"
_WEEKDAY = r"(" + "|".join(sorted(_WEEKDAY_FORMS, key=len, reverse=True)) + r")\.?"
_FIXED_DAYS = {
    "the day before yesterday": -2,
    "day before yesterday": -2,
    "yesterday": -1,
    "today": 0,
    "tonight": 0,
    "tomorrow": 1,
}
_PATTERNS = (
    ("fixed", re.compile(r"\b(" + "|".join(_FIXED_DAYS) + r")\b")),
    ("ago", re.compile(r"\b" + _NUMBER + r" (day|weekend|week|month)s? ago\b")),
    ("relative_weekday", re.compile(r"\b(last|this|next|past) " + _WEEKDAY + r"(?!\w)")),
    ("on_weekday", re.compile(r"\bon " + _WEEKDAY + r"(?!\w)")),
    ("relative_period", re.compile(r"\b(last|this|next|past) (week|weekend|month)\b")),
)


def day_node(day: date) -> str:
    return f"day:{day.isoformat()}"


def week_node(day: date) -> str:
    year, week, _ = day.isocalendar()
    return f"week:{year}-W{week:02d}"


def month_node(day: date) -> str:
    return f"month:{day.year}-{day.month:02d}"


def _shift_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _weekday(reference: date, which: str, weekday: int) -> date:
    delta = weekday - reference.weekday()
    if which in ("last", "past"):
        return reference + timedelta(days=delta - 7 if delta >= 0 else delta)
    if which == "next":
        return reference + timedelta(days=delta + 7 if delta <= 0 else delta)
    return reference + timedelta(days=delta)


def _resolve(kind: str, match: re.Match[str], reference: date) -> str:
    if kind == "fixed":
        return day_node(reference + timedelta(days=_FIXED_DAYS[match.group(1)]))
    if kind == "ago":
        count = int(match.group(1)) if match.group(1).isdigit() else NUMBERS[match.group(1)]
        unit = match.group(2)
        if unit == "day":
            return day_node(reference - timedelta(days=count))
        if unit in ("week", "weekend"):
            return week_node(reference - timedelta(weeks=count))
        return month_node(_shift_months(reference, -count))
    if kind == "relative_weekday":
        return day_node(_weekday(reference, match.group(1), _WEEKDAY_FORMS[match.group(2)]))
    if kind == "on_weekday":
        return day_node(_weekday(reference, "last", _WEEKDAY_FORMS[match.group(1)]))
    which, period = match.group(1), match.group(2)
    step = {"last": -1, "past": -1, "this": 0, "next": 1}[which]
    if period == "month":
        return month_node(_shift_months(reference, step))
    return week_node(reference + timedelta(weeks=step))


def relative_date_nodes(text: str, reference: date) -> set[str]:
    """The day, week and month nodes of the relative dates `text` names, said on
    `reference` (see the module docstring)."""
    lowered = text.lower()
    found: set[str] = set()
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(lowered):
            if any(start < match.end() and match.start() < end for start, end in taken):
                continue
            taken.append(match.span())
            found.add(_resolve(kind, match, reference))
    return found
