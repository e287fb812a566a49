"""Contract suites run through real GX validation: valid frames pass, each broken rule
fails under the expectation that guards it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from data_contracts.validate import ContractReport, validate_frame
from schemas.tables import FACT_VERSION_COLUMNS, SEGMENTS

T0 = pd.Timestamp("2024-01-01", tz="UTC")
DAY = pd.Timedelta(days=1)


def segments_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "segment_id": ["s1", "s2", "s3"],
            "collection": ["demo"] * 3,
            "doc_id": ["d1", "d1", "c1"],
            "kind": ["chunk", "chunk", "turn"],
            "seq": np.array([0, 1, 0], dtype="int32"),
            "text": ["Alice met Bob.", "They founded Acme.", "Hi there"],
            "char_start": np.array([0, 15, 0], dtype="int32"),
            "char_end": np.array([14, 33, 8], dtype="int32"),
            "speaker": [None, None, "alice"],
            "session_id": [None, None, "sess1"],
            "turn_id": [None, None, "t1"],
            "observed_at": pd.Series([T0] * 3, dtype="datetime64[us, UTC]"),
            "mentioned_from": pd.Series([pd.NaT] * 3, dtype="datetime64[us, UTC]"),
            "mentioned_to": pd.Series([pd.NaT] * 3, dtype="datetime64[us, UTC]"),
        }
    )


def fact_versions_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "version_id": ["v1", "v2", "v3"],
            "fact_id": ["f1", "f1", "f2"],
            "collection": ["demo"] * 3,
            "head_entity_id": ["e1", "e1", "e2"],
            "head_name": ["Alice", "Alice", "Acme"],
            "relation": ["works_at", "works_at", "located_in"],
            "tail_entity_id": ["e2", "e2", "e3"],
            "tail_name": ["Acme", "Acme", "Paris"],
            "confidence": [0.7, 0.9, 1.0],
            "valid_from": pd.Series([T0, T0, T0], dtype="datetime64[us, UTC]"),
            "valid_to": pd.Series([T0 + DAY, T0 + DAY, T0], dtype="datetime64[us, UTC]"),
            "recorded_from": pd.Series([T0, T0 + DAY, T0], dtype="datetime64[us, UTC]"),
            "recorded_to": pd.Series([T0 + DAY, pd.NaT, pd.NaT], dtype="datetime64[us, UTC]"),
            "operation": ["insert", "confidence-upgrade", "insert"],
            "supersedes": [None, "v1", None],
            "source_segment_ids": [["s1"], np.array(["s1", "s2"]), ["s2"]],
            "extractor": ["patterns"] * 3,
            "cardinality": ["single"] * 3,
        }
    )


def failed(report: ContractReport) -> set[tuple[str, str | None]]:
    return {(failure.expectation, failure.column) for failure in report.failures}


def test_valid_segments_pass() -> None:
    report = validate_frame("segments", segments_frame())
    assert report.success, report.summary()
    assert report.failures == ()
    assert report.rows == 3
    assert report.evaluated > len(SEGMENTS.names)


def test_empty_frame_with_all_columns_passes() -> None:
    assert validate_frame("segments", segments_frame().iloc[:0]).success
    assert validate_frame("fact_versions", pd.DataFrame(columns=list(FACT_VERSION_COLUMNS))).success


def test_missing_column_fails() -> None:
    report = validate_frame("segments", segments_frame().drop(columns=["observed_at"]))
    assert ("expect_column_to_exist", "observed_at") in failed(report)


def test_duplicate_segment_id_fails() -> None:
    frame = segments_frame()
    frame.loc[1, "segment_id"] = "s1"
    report = validate_frame("segments", frame)
    assert not report.success
    assert failed(report) == {("expect_column_values_to_be_unique", "segment_id")}
    (failure,) = report.failures
    assert failure.unexpected_count == 2
    assert failure.sample == ("s1", "s1")


def test_negative_char_start_fails() -> None:
    frame = segments_frame()
    frame.loc[0, "char_start"] = -1
    report = validate_frame("segments", frame)
    assert failed(report) == {("expect_column_values_to_be_between", "char_start")}
    assert report.failures[0].sample == ("-1",)


@pytest.mark.parametrize("char_end", [15, 10])
def test_char_end_not_after_char_start_fails(char_end: int) -> None:
    frame = segments_frame()
    frame.loc[1, "char_end"] = char_end
    report = validate_frame("segments", frame)
    assert failed(report) == {
        ("expect_column_pair_values_a_to_be_greater_than_b", "char_end,char_start")
    }
    assert report.failures[0].unexpected_count == 1


def test_unknown_kind_fails() -> None:
    frame = segments_frame()
    frame.loc[2, "kind"] = "paragraph"
    report = validate_frame("segments", frame)
    assert failed(report) == {("expect_column_values_to_be_in_set", "kind")}
    assert report.failures[0].sample == ("paragraph",)


def test_empty_text_and_null_doc_id_fail() -> None:
    frame = segments_frame()
    frame.loc[0, "text"] = ""
    frame.loc[1, "doc_id"] = None
    report = validate_frame("segments", frame)
    assert failed(report) == {
        ("expect_column_value_lengths_to_be_between", "text"),
        ("expect_column_values_to_not_be_null", "doc_id"),
    }


def test_valid_fact_versions_pass() -> None:
    report = validate_frame("fact_versions", fact_versions_frame())
    assert report.success, report.summary()


def test_confidence_above_one_fails() -> None:
    frame = fact_versions_frame()
    frame.loc[0, "confidence"] = 1.5
    report = validate_frame("fact_versions", frame)
    assert failed(report) == {("expect_column_values_to_be_between", "confidence")}
    assert report.failures[0].sample == ("1.5",)


@pytest.mark.parametrize("empty", [[], np.array([], dtype=object), None])
def test_fact_without_source_segments_fails(empty: object) -> None:
    frame = fact_versions_frame()
    frame.at[2, "source_segment_ids"] = empty
    report = validate_frame("fact_versions", frame)
    expected = {("expect_column_values_to_be_between", "n_source_segments")}
    if empty is None:  # a required column of the log: null fails on its own as well
        expected.add(("expect_column_values_to_not_be_null", "source_segment_ids"))
    assert failed(report) == expected
    assert {f.unexpected_count for f in report.failures} == {1}


def test_unknown_operation_fails() -> None:
    frame = fact_versions_frame()
    frame.loc[0, "operation"] = "upsert"
    report = validate_frame("fact_versions", frame)
    assert failed(report) == {("expect_column_values_to_be_in_set", "operation")}


def test_valid_to_before_valid_from_fails() -> None:
    frame = fact_versions_frame()
    frame.loc[0, "valid_to"] = T0 - DAY
    report = validate_frame("fact_versions", frame)
    assert failed(report) == {
        ("expect_column_pair_values_a_to_be_greater_than_b", "valid_to,valid_from")
    }


def test_open_validity_interval_passes() -> None:
    frame = fact_versions_frame()
    frame.loc[0, "valid_to"] = pd.NaT
    frame.loc[1, "valid_from"] = pd.NaT
    assert validate_frame("fact_versions", frame).success


def test_report_metadata_and_summary() -> None:
    frame = fact_versions_frame()
    frame.loc[0, "confidence"] = -0.1
    report = validate_frame("fact_versions", frame)
    metadata = report.as_metadata()
    assert metadata["success"] is False
    assert metadata["expectations_failed"] == 1
    assert metadata["rows"] == 3
    assert all(isinstance(value, str | int | bool) for value in metadata.values())
    assert "FAILED" in report.summary() and "confidence" in report.summary()


def test_repeated_validation_is_stable() -> None:
    first = validate_frame("segments", segments_frame())
    for _ in range(3):
        assert validate_frame("segments", segments_frame()) == first
        assert validate_frame("fact_versions", fact_versions_frame()).success


def test_unknown_table_raises() -> None:
    with pytest.raises(ValueError, match=r"known tables: fact_versions, segments"):
        validate_frame("nodes", pd.DataFrame())
