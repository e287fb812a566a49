"""What a PersonalAI traversal returns: the hyperedges it retrieved, each with the chain of
steps that reached it, and the nodes it visited; unions merge two of them.

A step crosses one hyperedge from one node to another member of it. The chain kept for a
retrieved hyperedge is the path that retrieved it (A*'s shortest path, the WaterCircles
ring path from its seed, the beam's path), so a segment can show the graph path that led
to it. The paper's hybrids are "the union of outputs" of two algorithms; merging keeps each
hyperedge once (the paper removes duplicates by content; a hyperedge is one content), with
the shorter of its two chains, and remembers which algorithms found it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple


class Step(NamedTuple):
    """One move across `hyperedge` from node `source` to node `target`."""

    hyperedge: int
    source: int
    target: int


@dataclass
class Traversal:
    """Retrieved hyperedges (-> the chain that reached each) and visited nodes."""

    chains: dict[int, tuple[Step, ...]] = field(default_factory=dict)
    found_by: dict[int, set[str]] = field(default_factory=dict)
    visited: set[int] = field(default_factory=set)
    details: dict[str, Any] = field(default_factory=dict)
    """Per algorithm, its parameters and what it did (JSON-serialisable)."""

    def retrieve(self, algorithm: str, hyperedge: int, chain: tuple[Step, ...]) -> None:
        """Record `hyperedge` as retrieved by `algorithm` through `chain` (kept if shorter)."""
        known = self.chains.get(hyperedge)
        if known is None or len(chain) < len(known):
            self.chains[hyperedge] = chain
        self.found_by.setdefault(hyperedge, set()).add(algorithm)

    def merge(self, other: Traversal) -> Traversal:
        """The union of two traversals (a new object; neither input changes)."""
        union = Traversal(
            chains=dict(self.chains),
            found_by={e: set(a) for e, a in self.found_by.items()},
            visited=self.visited | other.visited,
            details={**self.details, **other.details},
        )
        for hyperedge, chain in other.chains.items():
            for algorithm in other.found_by.get(hyperedge, ()):
                union.retrieve(algorithm, hyperedge, chain)
        return union
