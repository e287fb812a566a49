"""Consolidation: name variants become one entity; aliases keep every surface form."""

from transforms.consolidation import consolidate, normalize_name


def test_company_variants_normalise_together():
    keys = {normalize_name(n) for n in ["Acme Corp", "ACME", "Acme Corporation", "the Acme Corp."]}
    assert keys == {"acme"}
    assert normalize_name("Acme's") == "acme"
    assert normalize_name("Harborview Office") != normalize_name("Harborview")


def test_consolidate_builds_entities_and_aliases():
    surfaces = [
        ("Acme Corp", "Organization"),
        ("ACME", "Organization"),
        ("Acme Corporation", "Organization"),
        ("Acme Corporation", "Organization"),
        ("Rotterdam", "Location"),
        ("2021", "Value"),
    ]
    entities, aliases = consolidate("c", surfaces)
    by_name = {e["name"]: e for e in entities}
    assert set(by_name) == {"Acme Corporation", "Rotterdam"}
    assert by_name["Acme Corporation"]["mention_count"] == 4
    acme = by_name["Acme Corporation"]["entity_id"]
    assert {a["alias"] for a in aliases if a["entity_id"] == acme} == {
        "Acme Corp",
        "ACME",
        "Acme Corporation",
    }


def test_consolidation_is_order_independent():
    surfaces = [("Acme Corp", "Organization"), ("ACME", "Organization"), ("Leeds", "Location")]
    assert consolidate("c", surfaces) == consolidate("c", list(reversed(surfaces)))
