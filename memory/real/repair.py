"""REAL's counterfactual inference: alternative traversal hypotheses from rule templates,
turned into constrained traversals from a starved beam (§III-B2.III, Table I).

The paper leaves open whether an LLM or a rule engine generates the hypotheses and where
rule facts such as subClassOf come from. Here each template is a symbolic rule that
admits, from the beam's end entity, exactly the edges that one filter turned away, read
under the rule's hypothesis; an edge failing two filters is never admitted (a fact both
expired and hedged is no evidence). Inferred edges are not persisted: they exist only as
hops of the recovered paths, labelled with their template for the explanation.

Templates (Table I rule → hypothesis → the edges it admits):
- symmetry, likes(A,B) → interested_in(A,B): the relation has a counterpart of the beam's
  intent → edges failing only intent compatibility;
- hyponymy, subClassOf(A,B) ∧ likes(C,A) → likes(C,B): what holds of a class holds along
  its class links → taxonomic edges (is_a, part_of, member_of, ...) failing only intent;
- temporal succession, after(A,B) ∧ happened(B) → ¬happened(A): the state at τ_q is
  bracketed by the versions before and after it → edges failing only the time filter;
- causality, causes(A,B) ∧ true(A) → true(B): a cause carries to its effect →
  CAUSAL-labelled edges failing only intent;
- co-occurrence, co_occurs(A,B) ∧ mentions(C,A) → may_mention(C,B): entities mentioned
  together may be related → `co_occurs` hops to entities sharing a segment with the end
  entity and linked to it by no fact;
- speculation (ours: §III-B's uncertainty exception applied as a repair, not a Table I
  row): a hedged statement may hold → edges failing only the θ_stable filter.

Recovered hops keep their fact's confidence; a co-occurrence hop gets
`CO_OCCURRENCE_CONFIDENCE`, its statement vector is the description embedding of the
entity it reaches, and its evidence is the shared segments. The budget B_cf and the
evaluator ranking are applied by the beam search (`beam._merge_repairs`); here the
hypotheses are pre-ranked by similarity to the query and capped at m, like N_cand.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from memory.real.intents import CAUSAL, INTENTS, is_taxonomic
from memory.real.paths import Hop, Path, new_hop
from memory.real.space import (
    INTENT,
    INTENT_FAILED_TABLE,
    INTENT_INDEX,
    STABILITY,
    TIME,
    EntityEdges,
    SearchSpace,
    edge_at,
    unvisited,
)
from transforms.graph_links import linearize

SYMMETRY = "symmetry"
HYPONYMY = "hyponymy"
TEMPORAL_SUCCESSION = "temporal_succession"
CAUSALITY = "causality"
CO_OCCURRENCE = "co_occurrence"
SPECULATION = "speculation"
TEMPLATES = (SYMMETRY, HYPONYMY, TEMPORAL_SUCCESSION, CAUSALITY, CO_OCCURRENCE, SPECULATION)
FEW_EDGES = 32
"""Rule edges of one (entity, intent) up to which their far ends are kept as a set too,
so that a path visiting none of them (the usual case: the edge it came by passed the
filters) needs no comparison of arrays."""
CO_OCCURRENCE_CONFIDENCE = 0.5
"""Confidence of a co-occurrence hop: a guess (may_mention), at the hedged level."""


def template_for(failed: frozenset[str], relation: str, label: str) -> str | None:
    """The template that admits an edge failing exactly `failed`, if any."""
    return template_of(failed, is_taxonomic(relation), label)


def template_of(failed: frozenset[str], taxonomic: bool, label: str) -> str | None:
    """`template_for` of a relation known only as taxonomic or not (all it reads of it)."""
    if failed == {TIME}:
        return TEMPORAL_SUCCESSION
    if failed == {STABILITY}:
        return SPECULATION
    if failed == {INTENT}:
        if label == CAUSAL:
            return CAUSALITY
        return HYPONYMY if taxonomic else SYMMETRY
    return None


RULE_TEMPLATES = [
    template_of(
        frozenset({(TIME, STABILITY, INTENT)[key // 2 // len(INTENTS)]}),
        bool(key // len(INTENTS) % 2),
        INTENTS[key % len(INTENTS)],
    )
    for key in range(3 * 2 * len(INTENTS))
]
"""`template_of` an edge failing exactly one filter, by key (filter index (time,
stability, intent) x 2 + taxonomic) x len(INTENTS) + label index: a table of the 3 x 2 x
|INTENTS| cases, read per edge instead of asked per distinct case of each call."""


class Repairer:
    """ConstrainedTraverse(CounterfactualInfer(q, M, P, ι)) for the enabled templates."""

    def __init__(self, space: SearchSpace, templates: Collection[str] = TEMPLATES) -> None:
        unknown = set(templates) - set(TEMPLATES)
        if unknown:
            raise ValueError(f"unknown repair templates {sorted(unknown)}; known: {TEMPLATES}")
        self.space = space
        self.templates = frozenset(templates)
        self._admitted = np.array([t in self.templates for t in RULE_TEMPLATES], bool)
        """Per `RULE_TEMPLATES` key, whether its template is enabled."""
        self._enabled = tuple(sorted(self.templates))

    def __call__(self, path: Path) -> list[Path]:
        """TopM of the rule hops and then the co-occurrence hops, ranked as arrays; hop
        objects are built for the m kept only."""
        return [path.extend(hop) for hop in self.hops(path)]

    def hops(self, path: Path) -> list[Hop]:
        """The hops of the recovered paths (`__call__`), in order."""
        space, end = self.space, path.end
        edges = space.edges_of(end)
        at, keys = self._rule_edges(edges, path)
        targets, target_vectors = (
            self.co_occurrence_candidates(path)
            if CO_OCCURRENCE in self.templates
            else (_NO_TARGETS, None)
        )
        ruled = len(at)
        if not ruled and not len(targets):
            return []
        shared = False  # the matrix's edge rows lie in a buffer later repairs rewrite
        if not ruled:
            vectors = target_vectors
        elif not len(targets):
            vectors = space.edge_rows(end, at)
        else:
            vectors = space.stacked_before(end, at, target_vectors)
            shared = vectors is not None
            if not shared:
                vectors = space.stacked_rows(end, at, target_vectors)
        kept = []
        for i in space.best(vectors):
            if i < ruled:
                hop = space.edge_hop_at(
                    end,
                    edges,
                    int(at[i]),
                    RULE_TEMPLATES[int(keys[i])],
                    space.edge_rows(end, at[i : i + 1])[0] if shared else vectors[i],
                )
            else:
                hop = self.co_occurrence_hop(path, int(targets[i - ruled]), vectors[i])
            kept.append(hop)
        return kept

    def rule_hops(self, path: Path) -> list[Hop]:
        """Fact edges of the path's end admitted by a filter-relaxing template."""
        edges = self.space.edges_of(path.end)
        at, templates = self.rule_edges(path)
        return [
            self.space.fact_hop(path, edge_at(edges, int(i)), repair=template)
            for i, template in zip(at.tolist(), templates, strict=True)
        ]

    def rule_edges(self, path: Path) -> tuple[np.ndarray, list[str]]:
        """(positions among the end's edges of those a template admits, in edge order;
        the template of each): an edge failing exactly one filter, under the template
        `template_for` names for that filter and the fact's relation and label (asked once
        per distinct (filter, taxonomic relation, label) of the edges)."""
        at, keys = self._rule_edges(self.space.edges_of(path.end), path)
        return at, [RULE_TEMPLATES[k] for k in keys.tolist()]

    def prepare(self, paths: list[Path]) -> None:
        """The rule edges (`_rule_edges`) of each (end entity, intent) of `paths` not found
        yet, found together: the filters of all their edges in one pass, cut per pair
        (after `SearchSpace.prepare`, which reads the entities' edges)."""
        space = self.space
        pairs = []
        for end, intent in dict.fromkeys((p.end, p.intent) for p in paths if p.end < space._n):
            edges = space._edges.get(end)
            if edges is not None and (intent, self._enabled) not in edges.memo:
                pairs.append((intent, edges))
        if len(pairs) < 2:
            return
        counts = [len(edges.facts) for _, edges in pairs]
        intents = np.repeat([INTENT_INDEX[intent] for intent, _ in pairs], counts)
        time_failed = np.concatenate([edges.time_failed for _, edges in pairs])
        stability_failed = np.concatenate([edges.stability_failed for _, edges in pairs])
        labels = np.concatenate([edges.labels for _, edges in pairs])
        taxonomic = np.concatenate([edges.taxonomic for _, edges in pairs])
        intent_failed = INTENT_FAILED_TABLE[intents, labels]
        failing = time_failed.astype(int) + stability_failed + intent_failed
        at = np.flatnonzero(failing == 1)
        failed = np.where(time_failed[at], 0, np.where(stability_failed[at], 1, 2))
        key = (failed * 2 + taxonomic[at]) * len(INTENTS) + labels[at]
        admitted = self._admitted[key]
        at, key = at[admitted], key[admitted]
        offsets = np.cumsum([0, *counts])
        bounds = np.searchsorted(at, offsets).tolist()
        for j, (intent, edges) in enumerate(pairs):
            local = at[bounds[j] : bounds[j + 1]] - offsets[j]
            others = edges.others[local]
            few = frozenset(others.tolist()) if len(others) <= FEW_EDGES else None
            edges.memo[(intent, self._enabled)] = (
                local,
                key[bounds[j] : bounds[j + 1]],
                others,
                few,
            )

    def _rule_edges(self, edges: EntityEdges, path: Path) -> tuple[np.ndarray, np.ndarray]:
        """`rule_edges` with each template as its `RULE_TEMPLATES` key; the edges a
        template admits for the path's intent are found once per (entity, intent,
        templates enabled) (`EntityEdges.memo`), the path's visits then taken out."""
        memo_key = (path.intent, self._enabled)
        known = edges.memo.get(memo_key)
        if known is None:
            intent_failed = edges.intent_failed(path.intent)
            failing = edges.time_failed.astype(int) + edges.stability_failed + intent_failed
            at = np.flatnonzero(failing == 1)
            failed = np.where(edges.time_failed[at], 0, np.where(edges.stability_failed[at], 1, 2))
            key = (failed * 2 + edges.taxonomic[at]) * len(INTENTS) + edges.labels[at]
            admitted = self._admitted[key]
            at, key = at[admitted], key[admitted]
            others = edges.others[at]
            few = frozenset(others.tolist()) if len(others) <= FEW_EDGES else None
            known = edges.memo[memo_key] = (at, key, others, few)
        at, key, others, few = known
        if len(at) and (few is None or not few.isdisjoint(path.entities)):
            open_ = unvisited(others, path)
            at, key = at[open_], key[open_]
        return at, key

    def co_occurrence_hops(self, path: Path) -> list[Hop]:
        """Hops to entities sharing a segment with the end entity but no fact with it."""
        targets, vectors = self.co_occurrence_candidates(path)
        return [
            self.co_occurrence_hop(path, int(t), v) for t, v in zip(targets, vectors, strict=True)
        ]

    def co_occurrence_targets(self, path: Path) -> np.ndarray:
        """Entities sharing a segment with the end entity, linked to it by no fact, not on
        the path and with a description vector, in the order the segment product gives."""
        return self.co_occurrence_candidates(path)[0]

    def co_occurrence_candidates(self, path: Path) -> tuple[np.ndarray, np.ndarray]:
        """`co_occurrence_targets` and their description vectors."""
        targets, vectors = self.space.co_occurring(path.end)
        open_ = unvisited(targets, path)
        if open_.all():  # the usual case: no copy of a hub's thousands of rows
            return targets, vectors
        return targets[open_], vectors[open_]

    def co_occurrence_hop(self, path: Path, target: int, vector: np.ndarray | None = None) -> Hop:
        """The co-occurrence hop to `target` (`vector`: its description vector, when the
        caller has read it); kept per query with the space's hops (`SearchSpace._hops`)."""
        space, end = self.space, path.end
        key = (end, target, CO_OCCURRENCE)
        known = space._hops.get(key)
        if known is not None:
            return known
        names = space.graph.entity_names
        source_name, target_name = names[end], names[target]
        known = space._hops[key] = new_hop(
            None,
            end,
            target,
            "co_occurs",
            target_name,
            linearize(source_name, "co_occurs", target_name),
            CO_OCCURRENCE_CONFIDENCE,
            True,
            space.entity_types[target],
            None,
            None,
            CO_OCCURRENCE,
            (),
            space.entity_vectors[target] if vector is None else vector,
        )
        return known


_NO_TARGETS = np.zeros(0, np.int64)
_NO_TARGETS.flags.writeable = False
