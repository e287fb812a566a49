"""Root-entity anchoring with intent decoupling (REAL §III-B1): the entities a query starts
from, each with the exploration intent of its own part of the query.

The paper's anchoring is an LLM prompt (unpublished) that also links surface strings to
graph nodes in an unspecified way. Here: roots are the entities the query names (any alias
as a normalised n-gram, `linking.named_entities`) and the first `FLAT_ROOTS` entities of
the flat ranking's top segments; a query with neither falls back on the `FALLBACK_ROOTS`
entities whose description embedding is closest to it (cosine ≥
`linking.MIN_SIMILARITY`). Where the query names no entity that joins an untyped link
(`memory.real.links`: none, or hubs only), the topic/title and phrase nodes it names are
roots too (the paper's anchoring found nothing to walk from). Each root takes the intent
of the clause that names it when that clause has an intent cue, else the intent of the
whole query, so "Why did X fail and where is Y?" explores X causally and Y factually.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memory.graph import MemoryGraph
from memory.linking import named_entities, similar_entities
from memory.passage_links import PassageLinks, named_nodes
from memory.real.intents import FACT, clauses, query_intent
from memory.snapshot_view import SnapshotView

FALLBACK_ROOTS = 3
FLAT_ROOTS = 3
"""Entities of the flat (`hybrid`) ranking's top segments that root a search beside the
named ones: the issue's "REAL roots from the flat ranking"; the paper's LLM anchoring
has no such source."""


@dataclass(frozen=True)
class Anchor:
    """A root entity (graph position), its name, its intent and how it was found."""

    entity: int
    name: str
    intent: str
    linked_by: str

    def as_dict(self) -> dict[str, str]:
        return {"entity": self.name, "intent": self.intent, "linked_by": self.linked_by}


def clause_intents(view: SnapshotView, text: str) -> dict[str, str]:
    """Entity id -> the intent of the first clause that names it with an intent cue."""
    found: dict[str, str] = {}
    for clause in clauses(text):
        intent = query_intent(clause)
        if intent == FACT:
            continue
        for entity in named_entities(view, clause):
            found.setdefault(entity, intent)
    return found


def anchor(
    view: SnapshotView,
    graph: MemoryGraph,
    text: str,
    flat: Mapping[str, float] | None = None,
    links: PassageLinks | None = None,
    seeded: Sequence[tuple[int, float]] = (),
) -> list[Anchor]:
    """{(e_i, ι_i)}: the query's root entities with their intents: those it names, then
    up to `FLAT_ROOTS` entities of the flat ranking's top segments (`flat`, best first);
    a query with neither falls back on the most similar entity descriptions. With
    `links`, where no entity the query names joins an untyped link (none, or hubs only),
    the topic/title and phrase nodes it names root searches too (beam node n_entities +
    passage node position). `seeded`: the flat prior's seed nodes
    (`passage_links.seed_nodes`), roots too."""
    overall = query_intent(text)
    named = named_entities(view, text)
    by_clause = clause_intents(view, text)
    found = {entity: "name" for entity in named}
    for entity in list(flat or {})[:FLAT_ROOTS]:
        found.setdefault(entity, "flat ranking")
    if not found:
        found = {e: "similarity" for e in similar_entities(view, text, FALLBACK_ROOTS)}
    anchors = [
        Anchor(
            graph.entity_position[entity],
            graph.entity_names[graph.entity_position[entity]],
            by_clause.get(entity, overall),
            linked_by,
        )
        for entity, linked_by in found.items()
        if entity in graph.entity_position
    ]
    for node, _ in seeded:
        beam = (
            graph.n_entities + node if links.node_entity[node] < 0 else int(links.node_entity[node])
        )
        if all(a.entity != beam for a in anchors):
            anchors.append(Anchor(beam, links.name(node, graph.entity_names), overall, "flat node"))
    if links is not None and not any(_linkable(links, graph, e) for e in named):
        anchors += [
            Anchor(graph.n_entities + node, links.node_ids[node], overall, "named node")
            for node in named_nodes(links, text)
        ]
    return sorted(anchors, key=lambda a: (a.name, a.entity))


def _linkable(links: PassageLinks, graph: MemoryGraph, entity: str) -> bool:
    """Whether an entity joins untyped links (named by a segment, and no hub)."""
    position = graph.entity_position.get(entity)
    node = -1 if position is None else int(links.entity_node[position])
    return node >= 0 and bool(links.linkable[node])
