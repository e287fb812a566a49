"""Rule-based entity patterns that complete the statistical NER.

spaCy's small English model splits product model names ("Inkwell 3000" comes out as an
organisation plus a number) and misses alphanumeric codes ("E-42", "AC-10482"), which
are exactly what support conversations are about. An `entity_ruler` placed after `ner`
(overwriting overlapping predictions) adds:
- `PRODUCT`: a capitalised word followed by a model number of 3+ digits ("Inkwell 3000",
  "Paperhawk 200"), month names excluded ("May 2022" stays a date);
- `CODE`: one to three capitals, a hyphen and digits ("E-42", "AC-10482"): error codes,
  ticket ids. `CODE` maps to the KGERMAR type Concept.
"""

from __future__ import annotations

from spacy.language import Language

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]  # fmt: skip

DEFAULT_ENTITY_PATTERNS: tuple[dict[str, object], ...] = (
    {
        "label": "PRODUCT",
        "pattern": [
            {"IS_TITLE": True, "IS_STOP": False, "TEXT": {"NOT_IN": MONTHS}},
            {"IS_DIGIT": True, "LENGTH": {">=": 3}},
        ],
    },
    {"label": "CODE", "pattern": [{"TEXT": {"REGEX": r"^[A-Z]{1,3}-\d{1,6}$"}}]},
)


def add_entity_ruler(
    nlp: Language, patterns: tuple[dict[str, object], ...] = DEFAULT_ENTITY_PATTERNS
) -> None:
    """Append an entity ruler with `patterns` after the pipeline's `ner`."""
    ruler = nlp.add_pipe(
        "entity_ruler", name="kgmem_patterns", after="ner", config={"overwrite_ents": True}
    )
    ruler.add_patterns(list(patterns))
