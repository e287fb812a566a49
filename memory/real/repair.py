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

from memory.real.intents import CAUSAL, is_taxonomic
from memory.real.paths import Hop, Path
from memory.real.space import INTENT, STABILITY, TIME, SearchSpace
from transforms.graph_links import linearize

SYMMETRY = "symmetry"
HYPONYMY = "hyponymy"
TEMPORAL_SUCCESSION = "temporal_succession"
CAUSALITY = "causality"
CO_OCCURRENCE = "co_occurrence"
SPECULATION = "speculation"
TEMPLATES = (SYMMETRY, HYPONYMY, TEMPORAL_SUCCESSION, CAUSALITY, CO_OCCURRENCE, SPECULATION)
CO_OCCURRENCE_CONFIDENCE = 0.5
"""Confidence of a co-occurrence hop: a guess (may_mention), at the hedged level."""


def template_for(failed: frozenset[str], relation: str, label: str) -> str | None:
    """The template that admits an edge failing exactly `failed`, if any."""
    if failed == {TIME}:
        return TEMPORAL_SUCCESSION
    if failed == {STABILITY}:
        return SPECULATION
    if failed == {INTENT}:
        if label == CAUSAL:
            return CAUSALITY
        return HYPONYMY if is_taxonomic(relation) else SYMMETRY
    return None


class Repairer:
    """ConstrainedTraverse(CounterfactualInfer(q, M, P, ι)) for the enabled templates."""

    def __init__(self, space: SearchSpace, templates: Collection[str] = TEMPLATES) -> None:
        unknown = set(templates) - set(TEMPLATES)
        if unknown:
            raise ValueError(f"unknown repair templates {sorted(unknown)}; known: {TEMPLATES}")
        self.space = space
        self.templates = frozenset(templates)

    def __call__(self, path: Path) -> list[Path]:
        hops = self.rule_hops(path)
        if CO_OCCURRENCE in self.templates:
            hops += self.co_occurrence_hops(path)
        return self.space.top_m(path, hops)

    def rule_hops(self, path: Path) -> list[Hop]:
        """Fact edges of the path's end admitted by a filter-relaxing template."""
        graph, hops = self.space.graph, []
        for edge in self.space.open_edges(path):
            failed = self.space.failed_filters(edge.fact, path.intent)
            relation = graph.facts[edge.fact]["relation"]
            template = template_for(failed, relation, self.space.label(edge.fact))
            if template in self.templates:
                hops.append(self.space.fact_hop(path, edge, repair=template))
        return hops

    def co_occurrence_hops(self, path: Path) -> list[Hop]:
        """Hops to entities sharing a segment with the end entity but no fact with it."""
        graph, space = self.space.graph, self.space
        source = path.end
        shared = (graph.entity_segments[source] @ graph.mentions).tocsr()
        linked = {edge.other for edge in graph.edges(source)}
        hops = []
        for target in shared.indices.tolist():
            if target == source or target in linked or path.visits(target):
                continue
            vector = space.entity_vectors[target] if len(space.entity_vectors) else None
            if vector is None or not np.any(vector):
                continue
            source_name, target_name = graph.entity_names[source], graph.entity_names[target]
            hops.append(
                Hop(
                    fact=None,
                    source=source,
                    target=target,
                    relation="co_occurs",
                    target_name=target_name,
                    text=linearize(source_name, "co_occurs", target_name),
                    confidence=CO_OCCURRENCE_CONFIDENCE,
                    target_type=space.entity_types[target],
                    repair=CO_OCCURRENCE,
                    vector=vector,
                )
            )
        return hops
