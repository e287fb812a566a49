"""The stage's Arrow schemas and DuckDB tables agree."""

import duckdb
import pyarrow as pa

from schemas.llm_outputs import LLM_TRIPLETS
from schemas.warehouse import TABLE


def test_triplets_table_matches_the_arrow_schema():
    row = dict.fromkeys(LLM_TRIPLETS.names)
    row |= {"triplet_id": "t", "collection": "c", "source_turns": ["S1:1"]}
    row["thesis_entities"] = [
        {"text": "Acme", "entity_type": "Organization", "char_start": 0, "char_end": 4,
         "match_kind": "exact"}
    ]  # fmt: skip
    rows = pa.Table.from_pylist([row], schema=LLM_TRIPLETS)
    with duckdb.connect() as con:
        con.execute(TABLE["llm_triplets"].ddl())
        con.register("rows", rows)
        con.execute("INSERT INTO llm_triplets SELECT * FROM rows")
        back = con.sql("SELECT * FROM llm_triplets").to_arrow_table()
    assert back.schema.names == LLM_TRIPLETS.names
    assert back.cast(LLM_TRIPLETS).to_pylist() == rows.to_pylist()
