"""The record shape of a quarantined input: what was set aside, where it came from, and why.

Bad records never crash a stage and are never dropped silently: stages return them beside
their good output and the asset writes them to the `quarantine` table.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class QuarantineRecord:
    """One record set aside by `stage`, naming its file, its place in the file and the reason."""

    stage: str
    source_file: str
    record_ref: str
    reason: str
    raw: str = ""

    def as_row(self, collection: str) -> dict[str, str]:
        """Row for the quarantine table (the table adds `quarantined_at`)."""
        return {"collection": collection, **asdict(self), "raw": self.raw[:2000]}


def quarantine_rate(kept: int, quarantined: int) -> float:
    """Share of a stage's output records that were set aside (0 when it produced none)."""
    total = kept + quarantined
    return quarantined / total if total else 0.0
