"""Beam paths of REAL's search and their evaluator scores.

The paper writes a path as entities and intents only, `(e_0, ι_0, e_1, ι_1, ...)`; a hop
here also keeps the fact it traversed (its relation, validity and confidence are what
REAL's evidence serialization prints, and parallel edges between the same two entities
stay apart), the statement vector the embedding evaluator reads, and the counterfactual
template that admitted it (None for a normal expansion).
"""

from __future__ import annotations

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

    def __hash__(self) -> int:
        """The dataclass hash of the compared fields, computed once (a path hashes its
        hops whenever it is built)."""
        known = self.__dict__.get("_hash")
        if known is None:
            known = hash(
                (
                    self.fact,
                    self.source,
                    self.target,
                    self.relation,
                    self.target_name,
                    self.text,
                    self.confidence,
                    self.outgoing,
                    self.target_type,
                    self.valid_from,
                    self.valid_to,
                    self.repair,
                    self.segments,
                )
            )
            object.__setattr__(self, "_hash", known)
        return known


@dataclass(frozen=True)
class Path:
    """A root entity, the intent its beam explores, and the hops taken from it. Its
    entities, confidence, hash and text are computed once (kept on the instance, outside
    the fields that equality and hashing compare), a path `extend` builds from its
    parent's: beam pruning, repair ranking, aggregation, the evaluator and the visit
    filters read them again and again (~25k reads and ~57k hashes a query at 100k facts,
    where `functools.cached_property`, which takes a lock per read on Python 3.11, and the
    dataclass hash of every hop's fields cost ~10% of a query)."""

    root: int
    root_name: str
    intent: str
    hops: tuple[Hop, ...] = ()
    parent: Path | None = field(default=None, compare=False, repr=False)
    """The path this one extends by its last hop (`extend`); None for a path built whole.
    The evaluator reads its parent's running sums (`evaluator.EmbeddingEvaluator`)."""

    def __post_init__(self) -> None:
        parent = self.parent
        if parent is not None:
            hop = self.hops[-1]
            entities = (*parent.entities, hop.target)
            confidence = parent.confidence * hop.confidence
        else:
            entities = (self.root, *(hop.target for hop in self.hops))
            confidence = math.prod(hop.confidence for hop in self.hops)
        object.__setattr__(self, "entities", entities)
        object.__setattr__(self, "confidence", confidence)
        object.__setattr__(self, "_hash", hash((self.root, self.root_name, self.intent, self.hops)))

    entities: tuple[int, ...] = field(init=False, compare=False, repr=False)
    confidence: float = field(init=False, compare=False, repr=False)
    """Product of the hop confidences (all hops hold, if independent), multiplied in hop
    order as `math.prod` does, so a path extended hop by hop gets the same value."""
    _hash: int = field(init=False, compare=False, repr=False)

    def __hash__(self) -> int:
        return self._hash

    @property
    def end(self) -> int:
        return self.hops[-1].target if self.hops else self.root

    @property
    def facts(self) -> list[int]:
        return [hop.fact for hop in self.hops if hop.fact is not None]

    @property
    def repairs(self) -> list[str]:
        return [hop.repair for hop in self.hops if hop.repair]

    @property
    def text(self) -> str:
        """The path linearized hop by hop, or the bare root `[name]` (computed once)."""
        known = self.__dict__.get("_text")
        if known is None:
            known = (
                " ; ".join(hop.text for hop in self.hops) if self.hops else f"[{self.root_name}]"
            )
            object.__setattr__(self, "_text", known)
        return known

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
        return Path(self.root, self.root_name, self.intent, (*self.hops, hop), self)

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
