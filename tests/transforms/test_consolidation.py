"""Entity resolution: the cascade, its guards, and reversible merges."""

import numpy as np

from transforms.consolidation import normalize_name
from transforms.embedding import encode
from transforms.entity_resolution import ResolutionConfig, resolve


def _groups(resolution) -> dict[str, set[str]]:
    names = {e["entity_id"]: e["name"] for e in resolution.entities}
    groups: dict[str, set[str]] = {}
    for link in resolution.same_as:
        groups.setdefault(names[link.entity_id], set()).add(link.key)
    return groups


def test_company_variants_normalise_together():
    keys = {normalize_name(n) for n in ["Acme Corp", "ACME", "Acme Corporation", "the Acme Corp."]}
    assert keys == {"acme"}
    assert normalize_name("Acme's") == "acme"


def test_cascade_merges_variants_surnames_and_near_spellings():
    surfaces = [
        ("Acme Corp", "Organization"),
        ("ACME", "Organization"),
        ("Acme Corporation", "Organization"),
        ("Priya Natarajan", "Person"),
        ("Natarajan", "Person"),
        ("Harborview Office", "Organization"),
        ("Harbourview Office", "Organization"),
        ("Rotterdam", "Location"),
    ]
    resolution = resolve("c", surfaces)
    groups = _groups(resolution)
    assert groups["Priya Natarajan"] == {"priya natarajan", "natarajan"}
    assert groups["Harborview Office"] == {"harborview office", "harbourview office"}
    methods = {link.key: link.method for link in resolution.same_as}
    assert methods["natarajan"] == "person_surname"
    assert methods["harbourview office"] == "levenshtein"
    acme = next(e for e in resolution.entities if e["norm_key"] == "acme")
    aliases = {a["alias"] for a in resolution.aliases if a["entity_id"] == acme["entity_id"]}
    assert aliases == {"Acme Corp", "ACME", "Acme Corporation"}


def test_guards_keep_types_acronyms_and_ambiguous_surnames_apart():
    surfaces = [
        ("Jordan Lee", "Person"),
        ("Jordan Lea", "Location"),  # similar strings, other types
        ("IBMX", "Organization"),
        ("IBMZ", "Organization"),  # short keys: no fuzzy merge
        ("Anna Chen", "Person"),
        ("Laura Chen", "Person"),
        ("Chen", "Person"),  # ambiguous
    ]
    groups = _groups(resolve("c", surfaces))
    assert all(len(keys) == 1 for keys in groups.values()), groups


def test_a_split_is_one_constraint_and_a_merge_is_another():
    surfaces = [
        ("Priya Natarajan", "Person"),
        ("Natarajan", "Person"),
        ("Dana", "Person"),
        ("Dana Ruiz", "Person"),
    ]
    split = _groups(resolve("c", surfaces, cannot_link=[("Natarajan", "Priya Natarajan")]))
    assert split["Priya Natarajan"] == {"priya natarajan"}
    merged = _groups(
        resolve(
            "c",
            [("Mr Q", "Person"), ("Quentin Blake", "Person"), ("Quentin Blake", "Person")],
            must_link=[("Mr Q", "Quentin Blake")],
        )
    )
    assert merged["Quentin Blake"] == {"mr q", "quentin blake"}


def test_embedding_step_uses_threshold_on_real_encoder():
    surfaces = [
        ("Acme Printing Division", "Organization"),
        ("Acme Printing Divison", "Organization"),
        ("Rotterdam Harbour", "Location"),
    ]
    cfg = ResolutionConfig(theta_str=0.99, theta_ctx=0.8)  # only the embedding step can merge
    resolution = resolve("c", surfaces, embed=lambda keys: encode(list(keys)), cfg=cfg)
    methods = {link.key: link.method for link in resolution.same_as}
    assert "embedding" in methods.values()
    assert len(resolution.entities) == 2


def test_embedding_threshold_is_respected():
    keys_vectors = {"alpha one": [1.0, 0.0], "alpha two": [0.8, 0.6]}  # cosine 0.8 < 0.9

    def embed(keys):
        return np.array([keys_vectors[k] for k in keys], dtype=np.float32)

    resolution = resolve("c", [("Alpha One", "Concept"), ("Alpha Two", "Concept")], embed=embed)
    assert len(resolution.entities) == 2
