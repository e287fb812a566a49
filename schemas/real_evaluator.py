"""What REAL's LLM semantic evaluator must answer: per numbered path, its query relevance
(S_QR), logical coherence (S_LC) and entity-specific answer sufficiency (S_AS), each in
[0, 1] (papers/real.md §4.3). The JSON schema also constrains decoding where the backend
supports it; unknown keys are rejected, as for the extraction outputs."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAX_PATHS = 32
"""Most paths one evaluation batch holds (the current path, m expansions, or recoveries)."""


class PathScore(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: int = Field(ge=0)
    relevance: float = Field(ge=0.0, le=1.0)
    coherence: float = Field(ge=0.0, le=1.0)
    sufficiency: float = Field(ge=0.0, le=1.0)


class PathScores(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    scores: list[PathScore] = Field(max_length=MAX_PATHS)
