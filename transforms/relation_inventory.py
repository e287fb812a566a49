"""The relation inventory, and mappings of other label sets onto it.

KGERMAR classifies entity pairs into R = {HasProperty, CausedBy, PartOf, UsedFor, IsA,
LocatedAt, RelatedTo} or none. Models and datasets speak other label sets, so each gets a
mapping onto the inventory: label -> (inventory label, reversed). `reversed` swaps head and
tail ("A has part B" is "B PartOf A"). A label that no mapping knows goes to the
inventory's fallback (RelatedTo): a relation was asserted, its kind is not one of the six.

**Wikidata properties (Re-DocRED's 96 relations).** The rule for each target:
- LocatedAt: the head is physically or administratively situated at the tail: P131, P17,
  P276, P159 (headquarters), P740 (formed at), P551 (residence), P937 (work location), P206,
  P706, P30, P205, P1376 (capital of); reversed P36 (capital) and P150 (contains
  territory). P150 is the inverse of P131, and Re-DocRED annotates both directions, so it
  must land on the same label as P131 or one ordered pair would carry two labels.
- PartOf: member-collection and component-whole meronymy: P361, P463, P102, P54, P118,
  P108 (employer: an employee is a member of the organisation, as with TACRED's
  per:employee_of below), P1344 and P607 (participant in an event), P241, P749, P179, P1441;
  reversed P527, P355, P710, P674 (the inverses of P361, P749, P1344, P1441).
- IsA: P31, P279, P171 (parent taxon).
- CausedBy: P828, P1478; reversed P1542, P1536.
- UsedFor: P366; reversed P2283 ("A uses B" is "B UsedFor A").
- HasProperty: the tail is a value or category that describes the head: dates (P569, P570,
  P571, P576, P577, P580, P582, P585), languages (P1412, P37, P364, P103), genre P136,
  nationality, ethnicity and religion (P27, P172, P140), origin P495, birth and death
  place (P19, P20: biographical attributes like the dates beside them, not where the
  person is), position held P39, unemployment rate P1198.
- RelatedTo: everything else (family, creators and performers, founders, owners,
  successors, awards, ...).

**TACRED labels** (a TACRED BERT as in KGERMAR): headquarters and residences -> LocatedAt;
per:employee_of, org:member_of, org:parents -> PartOf, and their inverses org:members,
org:subsidiaries, org:top_members/employees reversed -> PartOf (membership and employment
as meronymy, the same reading as P108/P463); birth, death, age, title, religion, origin,
charges, founding and dissolution dates, size and website -> HasProperty;
per:cause_of_death -> CausedBy (the only causal label: the head's death was caused by the
tail); no_relation (and NA, no_relation_found, Other: the no-relation names of other
RE heads) -> none; the rest (family, alternate names, founders, shareholders,
schools, affiliations) -> RelatedTo.

**Dependency-pattern names** (verb lemma + preposition from `transforms.relations`, e.g.
`locate_in`, `part_of`, `ceo_of`) map by rule where the meaning is plain, else RelatedTo;
see `map_dependency_relation`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

KGERMAR_RELATIONS = (
    "HasProperty",
    "CausedBy",
    "PartOf",
    "UsedFor",
    "IsA",
    "LocatedAt",
    "RelatedTo",
)
NO_RELATION = "none"

INVERSE_SUFFIX = "^-1"
"""Marks a classifier class that holds from tail to head ("PartOf^-1": tail PartOf head)."""

LabelMap = Mapping[str, tuple[str, bool]]
"""Source label -> (inventory label, whether head and tail swap)."""


def directed(label: str, reverse: bool) -> str:
    """Class name of `label`, holding from tail to head when `reverse`."""
    return label + INVERSE_SUFFIX if reverse else label


def undirected(class_name: str) -> tuple[str, bool]:
    """(inventory label, whether head and tail swap) of a classifier class name."""
    if class_name.endswith(INVERSE_SUFFIX):
        return class_name.removesuffix(INVERSE_SUFFIX), True
    return class_name, False


def _targets(label: str, forward: str = "", reverse: str = "") -> dict[str, tuple[str, bool]]:
    mapping = {key: (label, False) for key in forward.split()}
    mapping.update({key: (label, True) for key in reverse.split()})
    return mapping


WIKIDATA_TO_KGERMAR: LabelMap = {
    **_targets(
        "LocatedAt", "P131 P17 P276 P159 P740 P551 P937 P206 P706 P30 P205 P1376", "P36 P150"
    ),
    **_targets(
        "PartOf",
        "P361 P463 P102 P54 P118 P108 P1344 P607 P241 P749 P179 P1441",
        "P527 P355 P710 P674",
    ),
    **_targets("IsA", "P31 P279 P171"),
    **_targets("CausedBy", "P828 P1478", "P1542 P1536"),
    **_targets("UsedFor", "P366", "P2283"),
    **_targets(
        "HasProperty",
        "P569 P570 P571 P576 P577 P580 P582 P585 P1412 P37 P364 P103 P136 P27 P172 P140 "
        "P495 P19 P20 P39 P1198",
    ),
}

TACRED_TO_KGERMAR: LabelMap = {
    **_targets(
        "LocatedAt",
        "org:city_of_headquarters org:country_of_headquarters "
        "org:stateorprovince_of_headquarters per:cities_of_residence "
        "per:countries_of_residence per:stateorprovinces_of_residence",
    ),
    **_targets(
        "PartOf",
        "per:employee_of org:member_of org:parents",
        "org:members org:subsidiaries org:top_members/employees",
    ),
    **_targets(
        "HasProperty",
        "per:city_of_birth per:country_of_birth per:stateorprovince_of_birth "
        "per:city_of_death per:country_of_death per:stateorprovince_of_death "
        "per:date_of_birth per:date_of_death per:age per:title per:religion per:origin "
        "per:charges org:founded org:dissolved org:number_of_employees/members org:website",
    ),
    **_targets("CausedBy", "per:cause_of_death"),
    **_targets(NO_RELATION, "no_relation NA no_relation_found Other"),
}


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_LOCATIVE_VERBS = _words("locate base headquarter situate live reside stay settle lie sit stand")
_LOCATIVE_PREPS = _words("in at on near inside within")
_PART_NOUNS = _words("part member component division subsidiary unit branch section piece employee")
_ROLE_NOUNS = _words(
    "ceo head chief director president chairman chair founder manager leader lead captain owner"
)
_WHOLE_VERBS = _words("include contain comprise incorporate")
_CAUSE_VERBS = _words("cause trigger produce")
_USE_VERBS = _words("use employ utilize utilise")


def map_dependency_relation(name: str) -> tuple[str, bool]:
    """(inventory label, reversed) for a dependency-pattern relation name.

    `<locative verb>_<in|at|on|...>` -> LocatedAt ("locate_in", "base_in", "live_in");
    `<part noun>_of`, `belong_to`, `join`, `work_at|for|in` and roles such as `ceo_of` ->
    PartOf (membership, the reading used for P108 and per:employee_of); `include` /
    `contain` -> PartOf reversed; `be` / `become` (an entity as the attribute) -> IsA;
    `cause` / `lead_to` / `result_in` -> CausedBy reversed, `cause_by` -> CausedBy;
    `use_for` -> UsedFor, `use` -> UsedFor reversed ("A uses B": B UsedFor A); anything
    else -> RelatedTo.
    """
    words = name.lower().split("_")
    verb, prep = words[0], words[-1] if len(words) > 1 else ""
    if verb in _LOCATIVE_VERBS and prep in _LOCATIVE_PREPS:
        return "LocatedAt", False
    if (verb in _PART_NOUNS or verb in _ROLE_NOUNS) and prep == "of":
        return "PartOf", False
    if name in {"belong_to", "join", "work_at", "work_for", "work_in"}:
        return "PartOf", False
    if verb in _WHOLE_VERBS and not prep:
        return "PartOf", True
    if verb in {"be", "become"} and not prep:
        return "IsA", False
    if name in {"cause_by", "trigger_by"}:
        return "CausedBy", False
    if (verb in _CAUSE_VERBS and not prep) or name in {"lead_to", "result_in"}:
        return "CausedBy", True
    if verb in _USE_VERBS:
        return ("UsedFor", False) if prep == "for" else ("UsedFor", True)
    return "RelatedTo", False


@dataclass(frozen=True)
class RelationInventory:
    """A relation label set with its no-relation label and the fallback for unknown labels.

    The default is KGERMAR's. A custom inventory keeps mappings usable: a mapped label the
    inventory lacks becomes `fallback`, which must itself be one of `labels`.
    """

    labels: tuple[str, ...] = KGERMAR_RELATIONS
    fallback: str = "RelatedTo"
    none: str = NO_RELATION
    wikidata: LabelMap = field(default_factory=lambda: WIKIDATA_TO_KGERMAR)

    def __post_init__(self) -> None:
        if self.fallback not in self.labels:
            raise ValueError(f"fallback {self.fallback!r} is not among labels {self.labels}")
        if self.none in self.labels:
            raise ValueError(f"the no-relation label {self.none!r} cannot be a relation label")

    @property
    def classes(self) -> tuple[str, ...]:
        """Classifier output classes: the no-relation label first, then the relations."""
        return (self.none, *self.labels)

    def resolve(self, label: str) -> str:
        """`label` if it is in the inventory (or is the no-relation label), else the fallback."""
        if label == self.none or label == NO_RELATION:
            return self.none
        return label if label in self.labels else self.fallback

    def map_label(self, label: str, mapping: LabelMap) -> tuple[str, bool]:
        """(inventory label, reversed) of a source label under `mapping`."""
        target, reverse = mapping.get(label, mapping.get(label.lower(), (self.fallback, False)))
        return self.resolve(target), reverse

    def map_wikidata(self, pid: str, head: int, tail: int) -> tuple[int, str, int]:
        """A gold (head, P-id, tail) triple as (head, inventory label, tail), direction fixed."""
        label, reverse = self.map_label(pid, self.wikidata)
        return (tail, label, head) if reverse else (head, label, tail)

    def map_dependency(self, name: str) -> tuple[str, bool]:
        """(inventory label, reversed) of a dependency-pattern relation name."""
        label, reverse = map_dependency_relation(name)
        return self.resolve(label), reverse


DEFAULT_INVENTORY = RelationInventory()
