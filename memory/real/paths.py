"""Beam paths of REAL's search and their evaluator scores.

The paper writes a path as entities and intents only, `(e_0, ι_0, e_1, ι_1, ...)`; a hop
here also keeps the fact it traversed (its relation, validity and confidence are what
REAL's evidence serialization prints, and parallel edges between the same two entities
stay apart), the statement vector the embedding evaluator reads, and the counterfactual
template that admitted it (None for a normal expansion).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


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

    def __getattr__(self, name: str) -> Any:
        """`text` of a hop built with its text pending (`new_hop`'s `text_of`: a fact's
        linearization reads its head and tail names from the fact table, and most hops a
        search builds are never printed), computed when first read."""
        if name == "text":
            pending = self.__dict__.get("_text_of")
            if pending is not None:
                text = pending[0](*pending[1:])
                object.__setattr__(self, "text", text)
                return text
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __hash__(self) -> int:
        """A hash of the fields that tell hops apart (the edge, its ends, the template and
        the evidence segments; equal hops agree on them), computed once (a path hashes
        its hops when it is first hashed)."""
        known = self.__dict__.get("_hash")
        if known is None:
            known = hash((self.fact, self.source, self.target, self.repair, self.segments))
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

    entities: tuple[int, ...] = field(init=False, compare=False, repr=False)
    confidence: float = field(init=False, compare=False, repr=False)
    """Product of the hop confidences (all hops hold, if independent), multiplied in hop
    order as `math.prod` does, so a path extended hop by hop gets the same value."""

    def __hash__(self) -> int:
        """A hash of the compared fields folded hop by hop (`hash((parent's, hop's))`), so
        a path extended hop by hop hashes as the same path built whole, each hop hashed
        once; computed when first asked for (most candidates of a search are scored and
        dropped, never put in a dict)."""
        known = self.__dict__.get("_hash")
        if known is None:
            parent = self.parent
            if parent is not None:
                known = hash((hash(parent), hop_hash(self.hops[-1])))
            else:
                known = hash((self.root, self.root_name, self.intent))
                for hop in self.hops:
                    known = hash((known, hop_hash(hop)))
            _set(self, "_hash", known)
        return known

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
        """`Path(root, root_name, intent, (*hops, hop), self)`, its derived attributes set
        as `__post_init__` sets them, without the frozen dataclass's `__init__` (a field at a
        time through `object.__setattr__`): ~650 paths a query at 100k facts."""
        path = _new(Path)
        hops = (*self.hops, hop)
        _set(
            path,
            "__dict__",
            {
                "root": self.root,
                "root_name": self.root_name,
                "intent": self.intent,
                "hops": hops,
                "parent": self,
                "entities": (*self.entities, hop.target),
                "confidence": self.confidence * hop.confidence,
            },
        )
        return path

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


_new = object.__new__
_set = object.__setattr__


def hop_hash(hop: Hop) -> int:
    """`hash(hop)`, read straight from the hop once computed (`Hop.__hash__` is a Python
    call per use)."""
    known = hop.__dict__.get("_hash")
    return hash(hop) if known is None else known


def new_hop(
    fact: int | None,
    source: int,
    target: int,
    relation: str,
    target_name: str,
    text: str | None,
    confidence: float,
    outgoing: bool,
    target_type: str | None,
    valid_from: datetime | None,
    valid_to: datetime | None,
    repair: str | None,
    segments: tuple[int, ...],
    vector: np.ndarray | None,
    text_of: tuple[Any, ...] | None = None,
) -> Hop:
    """`Hop(...)` of these fields (every one given), built without the frozen dataclass's
    `__init__`, which sets its fourteen fields one `object.__setattr__` at a time (~1.2 us
    against ~0.4 us; ~650 hops a query at 100k facts). With `text_of` (a function and its
    arguments) and `text` None, the text is computed when first read (`Hop.__getattr__`)."""
    hop = _new(Hop)
    _set(
        hop,
        "__dict__",
        {
            "fact": fact,
            "source": source,
            "target": target,
            "relation": relation,
            "target_name": target_name,
            "text": text,
            "confidence": confidence,
            "outgoing": outgoing,
            "target_type": target_type,
            "valid_from": valid_from,
            "valid_to": valid_to,
            "repair": repair,
            "segments": segments,
            "vector": vector,
        },
    )
    if text is None and text_of is not None:
        del hop.__dict__["text"]
        hop.__dict__["_text_of"] = text_of
    return hop


def new_scores(relevance: float, coherence: float, sufficiency: float) -> Scores:
    """`Scores(relevance, coherence, sufficiency)` without the frozen dataclass's
    `__init__` (see `new_hop`)."""
    scores = _new(Scores)
    _set(
        scores,
        "__dict__",
        {"relevance": relevance, "coherence": coherence, "sufficiency": sufficiency},
    )
    return scores


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
    return scored(scores, path.confidence)


def scored(scores: Scores, confidence: float) -> float:
    """`path_score` of a path of this `confidence` (`path.extend(hop)`'s is the parent's
    times the hop's)."""
    return scored_values(scores.relevance, scores.coherence, scores.sufficiency, confidence)


def scored_values(
    relevance: float, coherence: float, sufficiency: float, confidence: float
) -> float:
    """`scored` of the three scores as numbers."""
    semantic = (relevance + coherence + 2.0 * sufficiency) / 4.0
    return semantic * confidence


def best_first(items: list[T], score: Callable[[T], float], text: Callable[[T], str]) -> list[T]:
    """`sorted(items, key=lambda x: (-score(x), text(x)))`, the texts (a path's, which
    joins every hop's) read only among items of equal score (the search ranks ~1,000
    candidates a query, whose scores seldom tie)."""
    ordered = sorted(items, key=lambda x: -score(x))
    i, n = 0, len(ordered)
    while i < n - 1:
        value = score(ordered[i])
        j = i + 1
        while j < n and score(ordered[j]) == value:
            j += 1
        if j - i > 1:
            ordered[i:j] = sorted(ordered[i:j], key=text)
        i = j
    return ordered


def extended_text(path: Path, hop: Hop) -> str:
    """`path.extend(hop).text`, without the path."""
    return f"{path.text} ; {hop.text}" if path.hops else hop.text
