"""Expectation suites for kgmem tables, declared in code.

Each builder returns a fresh `gx.ExpectationSuite` whose column names come from the
table's declaration (`schemas.tables`, `schemas.warehouse`: its columns, key and required
columns), so a rename in the schema module reaches the contracts too. Checks
GX cannot express on raw columns use derived columns that `data_contracts.validate`
adds before validating (see `N_SOURCE_SEGMENTS`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import great_expectations as gx
import great_expectations.expectations as gxe

from schemas.tables import FACT_VERSION_COLUMNS, SEGMENT_KINDS, SEGMENTS, FactOperation
from schemas.warehouse import TABLE

FACT_OPERATIONS = tuple(FactOperation)
"""Operations a fact version may record in the temporal fact store."""

N_SOURCE_SEGMENTS = "n_source_segments"
"""Derived column: number of elements in `source_segment_ids` (GX has no list-length
expectation)."""


def _not_null(*columns: str) -> list[gxe.Expectation]:
    return [gxe.ExpectColumnValuesToNotBeNull(column=column) for column in columns]


def segments_suite() -> gx.ExpectationSuite:
    """Contract of the SEGMENTS table: identity, provenance and sane character offsets."""
    return gx.ExpectationSuite(
        name="segments",
        expectations=[
            *(gxe.ExpectColumnToExist(column=name) for name in SEGMENTS.names),
            *_not_null("segment_id", "collection", "doc_id", "text", "kind"),
            gxe.ExpectColumnValuesToBeUnique(column="segment_id"),
            gxe.ExpectColumnValuesToBeInSet(column="kind", value_set=list(SEGMENT_KINDS)),
            gxe.ExpectColumnValuesToBeBetween(column="char_start", min_value=0),
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="char_end", column_B="char_start", or_equal=False
            ),
            gxe.ExpectColumnValueLengthsToBeBetween(column="text", min_value=1),
        ],
    )


def fact_versions_suite(operations: Sequence[str] = FACT_OPERATIONS) -> gx.ExpectationSuite:
    """Contract of the fact-version log: identity, provenance, confidence and validity."""
    return gx.ExpectationSuite(
        name="fact_versions",
        expectations=[
            *(gxe.ExpectColumnToExist(column=name) for name in FACT_VERSION_COLUMNS),
            *_not_null(*TABLE["fact_version_log"].key, *TABLE["fact_version_log"].required),
            gxe.ExpectColumnValuesToBeUnique(column="version_id"),
            gxe.ExpectColumnValuesToBeBetween(column="confidence", min_value=0, max_value=1),
            gxe.ExpectColumnValuesToBeInSet(column="operation", value_set=list(operations)),
            gxe.ExpectColumnPairValuesAToBeGreaterThanB(
                column_A="valid_to",
                column_B="valid_from",
                or_equal=True,
                ignore_row_if="either_value_is_missing",
            ),
            gxe.ExpectColumnValuesToBeBetween(column=N_SOURCE_SEGMENTS, min_value=1),
        ],
    )


SUITES: dict[str, Callable[[], gx.ExpectationSuite]] = {
    "segments": segments_suite,
    "fact_versions": fact_versions_suite,
}
"""Table name -> suite builder."""
