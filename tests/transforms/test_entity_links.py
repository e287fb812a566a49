"""Untyped entity links: co-occurrence within the window, synonyms above the threshold."""

from transforms.entity_links import (
    CO_OCCURS,
    COOCCURRENCE_WEIGHT,
    SYNONYM,
    cooccurrence_links,
    synonym_links,
)

TEXT = "Alice met Bob in Paris." + " filler" * 60 + " Carol stayed home."
ENTITY_OF = {"alice": "e1", "bob": "e2", "paris": "e3", "carol": "e4"}


def _mention(surface: str, segment: str = "s1", text: str = TEXT) -> dict:
    start = text.index(surface)
    return {
        "segment_id": segment,
        "surface": surface,
        "char_start": start,
        "char_end": start + len(surface),
        "segment_text": text,
    }


def test_pairs_within_the_window_link_once_unless_a_typed_fact_joins_them():
    mentions = [_mention(s) for s in ("Alice", "Bob", "Paris", "Carol")]
    mentions.append(_mention("Alice", "s2", "Alice and Bob again."))
    mentions.append(_mention("Bob", "s2", "Alice and Bob again."))
    links = cooccurrence_links(mentions, ENTITY_OF, typed=[("e3", "e2")])
    pairs = {(r["head_id"], r["tail_id"]) for r in links}
    # Bob-Paris has a typed fact (either direction); Carol is 60 tokens away from all
    assert pairs == {("e1", "e2"), ("e1", "e3")}
    assert {r["kind"] for r in links} == {CO_OCCURS}
    assert {r["weight"] for r in links} == {COOCCURRENCE_WEIGHT}
    assert len({r["link_id"] for r in links}) == len(links)


def test_unresolved_mentions_and_self_pairs_link_nothing():
    text = "Alice and Alicia and Dave."
    mentions = [_mention(s, text=text) for s in ("Alice", "Alicia", "Dave")]
    assert cooccurrence_links(mentions, {"alice": "e1", "alicia": "e1"}, typed=[]) == []


def test_synonyms_keep_distinct_pairs_above_the_threshold_at_their_best_cosine():
    links = synonym_links(
        [("a", "a", 1.0), ("a", "b", 0.85), ("b", "a", 0.9), ("a", "c", 0.5)], threshold=0.8
    )
    assert [(r["head_id"], r["tail_id"], r["kind"], r["weight"]) for r in links] == [
        ("a", "b", SYNONYM, 0.9)
    ]
