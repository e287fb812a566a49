"""Parsing of the timestamps found in inputs into timezone-aware UTC datetimes.

Accepted: ISO-8601 dates and date-times (a naive value is taken as UTC), and LoCoMo's
session stamps such as "1:56 pm on 8 May, 2023".
"""

from __future__ import annotations

from datetime import UTC, datetime

_LOCOMO_FORMATS = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y")


def parse_time(value: object) -> datetime:
    """Parse `value` into an aware UTC datetime; raise ValueError saying what was not understood."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a timestamp string, got {value!r}")
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        parsed = _parse_locomo(text)
    return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _parse_locomo(text: str) -> datetime:
    for fmt in _LOCOMO_FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    expected = "ISO-8601 or '1:56 pm on 8 May, 2023'"
    raise ValueError(f"unrecognised timestamp {text!r} (expected {expected})")
