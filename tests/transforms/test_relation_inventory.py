"""Mappings of Wikidata, TACRED and dependency-pattern labels onto the inventory."""

import pytest

from transforms.relation_inventory import (
    DEFAULT_INVENTORY,
    KGERMAR_RELATIONS,
    TACRED_TO_KGERMAR,
    RelationInventory,
    directed,
    undirected,
)


@pytest.mark.parametrize(
    ("pid", "expected"),
    [
        ("P131", (1, "LocatedAt", 2)),
        ("P150", (2, "LocatedAt", 1)),  # contains -> the contained one is located in
        ("P361", (1, "PartOf", 2)),
        ("P527", (2, "PartOf", 1)),  # has part, reversed
        ("P31", (1, "IsA", 2)),
        ("P1542", (2, "CausedBy", 1)),  # has effect, reversed
        ("P828", (1, "CausedBy", 2)),
        ("P366", (1, "UsedFor", 2)),
        ("P569", (1, "HasProperty", 2)),
        ("P1412", (1, "HasProperty", 2)),
        ("P26", (1, "RelatedTo", 2)),  # spouse: no specific label
        ("P9999", (1, "RelatedTo", 2)),  # unknown property
    ],
)
def test_wikidata_mapping_with_direction(pid, expected):
    assert DEFAULT_INVENTORY.map_wikidata(pid, 1, 2) == expected


def test_every_target_is_in_the_inventory():
    for mapping in (DEFAULT_INVENTORY.wikidata, TACRED_TO_KGERMAR):
        for label, _ in mapping.values():
            assert label in (*KGERMAR_RELATIONS, "none")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("locate_in", ("LocatedAt", False)),
        ("base_in", ("LocatedAt", False)),
        ("part_of", ("PartOf", False)),
        ("ceo_of", ("PartOf", False)),
        ("work_at", ("PartOf", False)),
        ("include", ("PartOf", True)),
        ("be", ("IsA", False)),
        ("cause", ("CausedBy", True)),
        ("cause_by", ("CausedBy", False)),
        ("use_for", ("UsedFor", False)),
        ("acquire", ("RelatedTo", False)),
        ("meet_with", ("RelatedTo", False)),
    ],
)
def test_dependency_names(name, expected):
    assert DEFAULT_INVENTORY.map_dependency(name) == expected


def test_tacred_labels_and_custom_inventory():
    assert DEFAULT_INVENTORY.map_label("org:subsidiaries", TACRED_TO_KGERMAR) == ("PartOf", True)
    assert DEFAULT_INVENTORY.map_label("no_relation", TACRED_TO_KGERMAR) == ("none", False)
    assert DEFAULT_INVENTORY.map_label("per:spouse", TACRED_TO_KGERMAR) == ("RelatedTo", False)
    small = RelationInventory(labels=("LocatedAt", "Other"), fallback="Other")
    assert small.classes == ("none", "LocatedAt", "Other")
    assert small.map_wikidata("P361", 1, 2) == (1, "Other", 2)
    assert small.map_dependency("locate_in") == ("LocatedAt", False)
    with pytest.raises(ValueError, match="fallback"):
        RelationInventory(labels=("A",), fallback="B")


def test_inverse_class_names_round_trip():
    assert directed("PartOf", True) == "PartOf^-1"
    assert undirected("PartOf^-1") == ("PartOf", True)
    assert undirected("IsA") == ("IsA", False)
