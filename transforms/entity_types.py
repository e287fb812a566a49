"""Mapping of NER model labels onto KGERMAR's entity types.

KGERMAR types entities as Person, Organization, Location, Concept or Event. Numeric and
temporal labels (dates, money, quantities...) are kept as mentions with type `Value` but
do not become graph entities. Labels come from spaCy (OntoNotes), CoNLL-2003 and Re-DocRED
(PER, ORG, LOC, MISC, TIME, NUM) token classifiers and a few other common inventories; a
tagging-scheme prefix (`B-`, `I-`, `E-`, `S-`, `L-`, `U-`) is ignored.

spaCy's NORP (nationalities, religious and political groups) maps to Location: of the sm
model's NORP predictions on a Re-DocRED gold span, 601 are LOC, 106 ORG, 60 MISC and 36
PER (../shared/STACK_NOTES.md §3b), since a nationality names the place it belongs to.
"""

from __future__ import annotations

from transforms.token_spans import split_label

KGERMAR_TYPES = ("Person", "Organization", "Location", "Concept", "Event")
VALUE_TYPE = "Value"

_LABEL_TO_TYPE = {
    # spaCy OntoNotes labels
    "PERSON": "Person",
    "ORG": "Organization",
    "NORP": "Location",  # nationalities ("German"): Re-DocRED types them as LOC
    "GPE": "Location",
    "LOC": "Location",
    "FAC": "Location",
    "EVENT": "Event",
    "PRODUCT": "Concept",
    "WORK_OF_ART": "Concept",
    "LAW": "Concept",
    "LANGUAGE": "Concept",
    # CoNLL-2003 and Re-DocRED labels (Hugging Face token-classification models)
    "PER": "Person",
    "MISC": "Concept",
    # spelled-out labels of other token classifiers (e.g. WNUT-17, Few-NERD coarse types)
    "ORGANIZATION": "Organization",
    "ORGANISATION": "Organization",
    "CORPORATION": "Organization",
    "GROUP": "Organization",
    "LOCATION": "Location",
    "CREATIVE-WORK": "Concept",
    "MISCELLANEOUS": "Concept",
}
_VALUE_LABELS = {"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL", "NUM"}


def entity_type(label: str) -> str:
    """KGERMAR type of a model label (`Value` for numbers and dates, `Concept` if unknown)."""
    label = split_label(label.upper())[1]
    if label in _VALUE_LABELS:
        return VALUE_TYPE
    return _LABEL_TO_TYPE.get(label, "Concept")


def is_graph_entity(entity_type_name: str) -> bool:
    """Whether mentions of this type become entity nodes."""
    return entity_type_name in KGERMAR_TYPES
