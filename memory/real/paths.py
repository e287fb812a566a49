"""Beam paths of REAL's search and their evaluator scores.

The paper writes a path as entities and intents only, `(e_0, ι_0, e_1, ι_1, ...)`; a hop
here also keeps the fact it traversed (its relation, validity and confidence are what
REAL's evidence serialization prints, and parallel edges between the same two entities
stay apart), the statement vector the embedding evaluator reads, and the counterfactual
template that admitted it (None for a normal expansion).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np


@dataclass(frozen=True)
class Hop:
    """One traversed edge: `source` -> `target` (beam nodes: graph entity positions, or
    n_entities + passage node position for other nodes, `memory.real.links`) through
    `fact` (an index into the search graph's facts; None for a co-occurrence or an
    untyped hop)."""

    fact: int | None
    source: int
    target: int
    relation: str
    target_name: str
    text: str
    """The edge linearized in its stored direction, `[s] -[p]-> [o]`."""
    confidence: float
    outgoing: bool = True
    """True when the hop follows the fact's direction (source is its head)."""
    target_type: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    repair: str | None = None
    """The counterfactual template that admitted this hop, None for a normal one."""
    segments: tuple[int, ...] = ()
    """An untyped hop's evidence (`memory.real.links`): the segments it passes through
    (segment positions); empty for a fact or co-occurrence hop."""
    vector: np.ndarray | None = field(default=None, compare=False, repr=False)
    """Normalised statement embedding of the hop, for the embedding evaluator."""


@dataclass(frozen=True)
class Path:
    """A root entity, the intent its beam explores, and the hops taken from it. Its
    entities, confidence and text are computed once (cached on the instance, outside the
    fields that equality and hashing compare): beam pruning, repair ranking, aggregation
    and the visit filters read them again and again."""

    root: int
    root_name: str
    intent: str
    hops: tuple[Hop, ...] = ()

    @property
    def end(self) -> int:
        return self.hops[-1].target if self.hops else self.root

    @functools.cached_property
    def entities(self) -> tuple[int, ...]:
        return (self.root, *(hop.target for hop in self.hops))

    @property
    def facts(self) -> list[int]:
        return [hop.fact for hop in self.hops if hop.fact is not None]

    @functools.cached_property
    def confidence(self) -> float:
        """Product of the hop confidences (all hops hold, if independent)."""
        return math.prod(hop.confidence for hop in self.hops)

    @property
    def repairs(self) -> list[str]:
        return [hop.repair for hop in self.hops if hop.repair]

    @functools.cached_property
    def text(self) -> str:
        """The path linearized hop by hop, or the bare root `[name]`."""
        return " ; ".join(hop.text for hop in self.hops) if self.hops else f"[{self.root_name}]"

    def serialized(self) -> str:
        """REAL's evidence serialization (Eq. 9): `e0 --[r1, τ1, c1]--> e1 ...`, with the
        arrow reversed for a hop taken against the fact's direction."""
        parts = [self.root_name]
        for hop in self.hops:
            label = f"{hop.relation}, {_interval(hop)}, {hop.confidence:.2f}"
            parts.append(f"--[{label}]-->" if hop.outgoing else f"<--[{label}]--")
            parts.append(hop.target_name)
        return " ".join(parts)

    def extend(self, hop: Hop) -> Path:
        return Path(self.root, self.root_name, self.intent, (*self.hops, hop))

    def visits(self, entity: int) -> bool:
        return entity in self.entities


@dataclass(frozen=True)
class Scores:
    """S(p) = (S_QR, S_LC, S_AS), each in [0, 1] (paper §III-B2.II)."""

    relevance: float
    coherence: float
    sufficiency: float

    def as_dict(self) -> dict[str, float]:
        return {
            "query_relevance": round(self.relevance, 4),
            "logical_coherence": round(self.coherence, 4),
            "answer_sufficiency": round(self.sufficiency, 4),
        }


def _interval(hop: Hop) -> str:
    start = hop.valid_from.date().isoformat() if hop.valid_from else "?"
    end = hop.valid_to.date().isoformat() if hop.valid_to else "now"
    return f"{start}..{end}"


def path_score(path: Path, scores: Scores) -> float:
    """The scalar S(P|q) of TopK pruning and segment ranking (unspecified in the paper): a
    weighted mean of the three evaluator scores, S_AS counting double since it is what the
    Stop/Expand decision reads (a relevant path that ends on an answer beats a relevant one
    that does not), times the path confidence, so that a hedged or long path ranks below a
    sure, short one of the same semantic quality."""
    semantic = (scores.relevance + scores.coherence + 2.0 * scores.sufficiency) / 4.0
    return semantic * path.confidence
