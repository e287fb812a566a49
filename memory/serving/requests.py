"""What a server request may ask, as pydantic models: the HTTP API validates its bodies
and query strings with them, the MCP tools take the same fields as typed arguments, and
the OpenAPI document is generated from them. A bad field fails with its name and why."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator

from memory.memory import UNITS
from memory.strategies.names import STRATEGY_NAMES
from memory.strategies.options import check_options
from transforms.timeparse import parse_time

MAX_K = 1000
"""The most hits one query may ask for."""

Strategy = Literal[STRATEGY_NAMES]  # type: ignore[valid-type]
Timestamp = Annotated[
    datetime,
    BeforeValidator(parse_time),
    Field(description="ISO-8601 date or date-time; UTC when it names no zone"),
]
SnapshotName = Annotated[
    str | None,
    Field(
        description="snapshot id, or `latest`; default: the server's snapshot (the newest "
        "one recorded at or before `known_at` where that is given)",
    ),
]


class Strict(BaseModel):
    """A request model that refuses fields it does not know (a typo is an error)."""

    model_config = ConfigDict(extra="forbid")


class QueryRequest(Strict):
    """A retrieval query (`POST /query`, MCP `search_memory`)."""

    text: str = Field(min_length=1, description="the question or search text")
    strategy: Strategy = Field("dense", description="retrieval strategy")
    k: int = Field(5, ge=1, le=MAX_K, description="number of hits")
    unit: Literal[UNITS] = Field(  # type: ignore[valid-type]
        "passage",
        description="passage: k distinct documents or turns, each by its best segment; "
        "segment: k segments, several may come from one document (`Memory.query`)",
    )
    valid_at: Timestamp | None = Field(
        None, description="reference time: facts valid then, no later segments"
    )
    known_at: Timestamp | None = Field(
        None,
        description="answer from the newest snapshot recorded at or before this time "
        "(what the memory knew then)",
    )
    snapshot: SnapshotName = None
    explain: bool = Field(False, description="include the strategy's explanation")
    options: dict[str, Any] = Field(
        default_factory=dict, description="strategy options (see the strategy's docs)"
    )

    @field_validator("options")
    @classmethod
    def _strategy_reads_them(cls, options: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
        """Options the strategy does not read, or invalid values, fail as `options`."""
        if "strategy" in info.data:
            check_options(info.data["strategy"], options)
        return options


class FactsRequest(Strict):
    """An entity's fact history as of both time axes (`GET /facts`, MCP `get_facts`)."""

    entity: str = Field(min_length=1, description="entity name or alias, e.g. 'Sam Okafor'")
    valid_at: Timestamp | None = Field(None, description="only facts true at this time")
    known_at: Timestamp | None = Field(
        None,
        description="as the memory believed at this time (never later than the snapshot's "
        "recorded cutoff)",
    )
    relation: str | None = Field(None, description="only this relation, e.g. live_in")
    stable_only: bool = Field(False, description="only facts of confidence >= 0.8")
    snapshot: SnapshotName = None


class EntityRequest(Strict):
    """An entity of a snapshot (`GET /entities/{name}`, MCP `get_entity`)."""

    name: str = Field(min_length=1, description="entity name or alias")
    snapshot: SnapshotName = None
