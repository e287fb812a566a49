"""Record shapes of the `llm_triplets` stage: what an LLM must answer, what the stage writes.

Three outputs, one per paper (`../shared/papers/`), each a pydantic model whose JSON schema
is also what constrains decoding (llama.cpp grammar, `response_format` of an
OpenAI-compatible endpoint):

- `AtomicFacts` - REAL atomic facts, the sextuple (head, relation, tail, [valid_from,
  valid_to], confidence, intent).
- `TurnTriplets` - MemORAI entity-relation-entity triplets, each citing the turn ids it
  was read from.
- `Theses` - PersonalAI theses: an atomic proposition and the entities it connects.

Every field is required (nullable ones are `... | None`) so that grammar-constrained
decoding always emits the same keys in the same order, and unknown keys are rejected, so
a drifting model is quarantined rather than half-read. Lists are bounded to keep a small
model from looping until its token budget runs out.

The Arrow schemas are the stage's Parquet/DuckDB rows: `LLM_SEGMENTS` (input),
`LLM_TRIPLETS` (output; its warehouse table is declared in `schemas.warehouse`),
`LLM_QUARANTINE` (rows of the `quarantine` table as Beam writes them) and `LLM_CACHE` /
`LLM_CACHE_TABLE` (the DuckDB table every call is cached in).
"""

from __future__ import annotations

from datetime import date
from enum import StrEnum
from typing import Annotated

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from schemas.ddl import TableDecl
from schemas.tables import MENTION, QUARANTINE_RECORD

MAX_ITEMS = 8
"""Most facts, triplets or theses one answer may hold."""

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
Statement = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=400)]


class Intent(StrEnum):
    """REAL's exploration intent: what later retrieval or reasoning a fact supports."""

    FACT = "FACT"
    CAUSAL = "CAUSAL"
    TEMPORAL = "TEMPORAL"
    CONTRAST = "CONTRAST"
    EVOLUTION = "EVOLUTION"


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AtomicFact(_Output):
    """One REAL atomic fact. `valid_from` is the start the text states (null: none stated;
    the fact stage then uses the time the segment was observed, as REAL does with the
    utterance time); `valid_to` null means still valid (REAL's tau_e = inf)."""

    head: Name
    relation: Name
    tail: Name
    valid_from: date | None
    valid_to: date | None
    confidence: float = Field(gt=0.0, le=1.0)
    intent: Intent

    @model_validator(mode="after")
    def _interval_is_ordered(self) -> AtomicFact:
        if self.valid_from and self.valid_to and self.valid_to < self.valid_from:
            raise ValueError(f"valid_to {self.valid_to} is before valid_from {self.valid_from}")
        return self


class AtomicFacts(_Output):
    """Answer of the REAL prompt."""

    facts: list[AtomicFact] = Field(max_length=MAX_ITEMS)


class TurnTriplet(_Output):
    """One MemORAI triplet; `source_turns` are the ids of the turns it states."""

    head: Name
    relation: Name
    tail: Name
    source_turns: list[Name] = Field(min_length=1, max_length=MAX_ITEMS)


class TurnTriplets(_Output):
    """Answer of the MemORAI prompt."""

    triplets: list[TurnTriplet] = Field(max_length=MAX_ITEMS)


class Thesis(_Output):
    """One PersonalAI thesis: a complete atomic statement, a hyperedge over `entities`."""

    text: Statement
    entities: list[Name] = Field(min_length=1, max_length=MAX_ITEMS)


class Theses(_Output):
    """Answer of the PersonalAI prompt."""

    theses: list[Thesis] = Field(max_length=MAX_ITEMS)


OUTPUT_KINDS = ("atomic_fact", "turn_triplet", "thesis")
"""Values of `LLM_TRIPLETS.output_kind`, one per output model."""

MATCH_KINDS = ("exact", "containment", "fuzzy", "speaker")
"""How an entity named by the LLM was matched to the segment (see transforms.llm.matching)."""

TURN = pa.struct([("turn_id", pa.string()), ("speaker", pa.string()), ("text", pa.string())])

LLM_SEGMENTS = pa.schema(
    [
        ("segment_id", pa.string()),
        ("collection", pa.string()),
        ("doc_id", pa.string()),
        ("kind", pa.string()),
        ("text", pa.string()),
        ("speaker", pa.string()),
        ("turn_id", pa.string()),
        ("observed_at", pa.timestamp("us", tz="UTC")),
        ("mentions", pa.list_(MENTION)),
        ("turns", pa.list_(TURN)),
    ]
)
"""Input of the LLM pipeline: a segment, its NER mentions and, for a conversation turn,
the turns shown to the model (earlier turns of the session as context, the segment's own
turn last; null means just the segment's own turn)."""

ENTITY_REF = pa.struct(
    [
        ("text", pa.string()),
        ("entity_type", pa.string()),
        ("char_start", pa.int32()),
        ("char_end", pa.int32()),
        ("match_kind", pa.string()),
    ]
)
"""An entity end resolved to a mention of the segment (or to a speaker: no span)."""

LLM_TRIPLETS = pa.schema(
    [
        ("triplet_id", pa.string()),
        ("collection", pa.string()),
        ("segment_id", pa.string()),
        ("doc_id", pa.string()),
        ("output_kind", pa.string()),  # one of OUTPUT_KINDS
        ("head_text", pa.string()),  # the matched mention's text (null for theses)
        ("head_type", pa.string()),
        ("head_start", pa.int32()),  # offsets into the segment text; null for a speaker
        ("head_end", pa.int32()),
        ("head_match", pa.string()),  # one of MATCH_KINDS
        ("relation", pa.string()),  # lower snake_case
        ("tail_text", pa.string()),
        ("tail_type", pa.string()),
        ("tail_start", pa.int32()),
        ("tail_end", pa.int32()),
        ("tail_match", pa.string()),
        ("valid_from", pa.timestamp("us", tz="UTC")),  # REAL only; null: not stated
        ("valid_to", pa.timestamp("us", tz="UTC")),  # REAL only; null: still valid
        ("confidence", pa.float32()),  # REAL only
        ("intent", pa.string()),  # REAL only, one of Intent
        ("source_turns", pa.list_(pa.string())),  # turn ids (MemORAI) or the segment's turn
        ("thesis", pa.string()),  # PersonalAI only
        ("thesis_entities", pa.list_(ENTITY_REF)),  # PersonalAI only
        ("prompt_version", pa.string()),
        ("backend", pa.string()),
        ("model", pa.string()),
        ("cache_key", pa.string()),  # the llm_cache row that produced it
        ("extractor", pa.string()),  # "llm:<backend>:<model>:<prompt_version>"
    ]
)

LLM_QUARANTINE = QUARANTINE_RECORD
"""`QuarantineRecord.as_row` as Parquet; the `quarantine` table adds `quarantined_at`."""

LLM_CACHE = pa.schema(
    [
        ("cache_key", pa.string()),
        ("backend", pa.string()),
        ("model", pa.string()),
        ("prompt_version", pa.string()),
        ("input_hash", pa.string()),
        ("response", pa.string()),
        ("prompt_tokens", pa.int32()),
        ("completion_tokens", pa.int32()),
        ("served_model", pa.string()),
        ("latency_s", pa.float64()),
        ("created_at", pa.timestamp("us", tz="UTC")),
    ]
)

LLM_CACHE_TABLE = TableDecl(
    "llm_cache",
    LLM_CACHE,
    ("cache_key",),
    ("backend", "model", "prompt_version", "input_hash", "response", "created_at"),
)
"""The call cache: one row per distinct (backend, model, prompt version, input hash)."""
