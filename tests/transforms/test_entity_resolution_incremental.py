"""Incremental entity resolution against its blocking index: after every step of random
additions, removals, type changes and constraint edits, the incremental run gives exactly
what a full run of the same inputs gives (entities, aliases, same_as with method and
score), and its index equals the index built from scratch."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from transforms.entity_resolution import (
    BlockingIndex,
    ResolutionConfig,
    key_tokens,
    resolve_incremental,
)

CFG = ResolutionConfig(theta_ctx=0.8, max_block=6, lsh_bits=3, lsh_bands=4, seed=5)
"""Small blocks and few LSH bits, so that blocks cross `max_block` both ways as keys come
and go; a lower θ_ctx, so that the trigram embedding below merges near-duplicates."""
DIMENSIONS = 64

PERSONS = [f"{first} {last}" for first in ("Priya", "Anna", "Laura", "Marcus", "Jordan")
           for last in ("Natarajan", "Chen", "Becker", "Bennett")]  # fmt: skip
NAMES = [
    *PERSONS,
    "Natarajan", "Chen", "Becker", "Quentin Blake", "Blake", "Dana Ruiz", "Ruiz",
    "Priya Natarajn", "Marcus Benett", "Anna Beckerr",
    *(f"Northwind {part}" for part in ("Alpha", "Beta", "Gamma", "Delta", "Omega", "Sigma",
                                       "Kappa", "Theta", "Zeta")),
    "IBM", "International Business Machines", "U.S.", "United States", "US", "EU",
    "European Union", "NASA", "National Aeronautics Space Administration",
    "Second Division", "Third Division", "2006 Winter Olympics", "2010 Winter Olympics",
    "Harborview Office", "Harbourview Office", "Acme Printing Division",
    "Acme Printing Divison", "Acme Corp", "ACME", "the Acme Corporation", "Rotterdam",
    "Rotterdam Harbour", "Rotterdam Harbor", "Jordan Lee", "Jordan Lea",
    # the same words in another order: far apart as strings, close as trigram embeddings
    "Business Machines International", "Office Harborview", "Division Acme Printing",
    "Kappa Northwind", "National Space Aeronautics Administration",
]  # fmt: skip
NEAR_PAIRS = [
    ("Rotterdam Harbour", "Rotterdam Harbor"), ("Harborview Office", "Harbourview Office"),
    ("Priya Natarajan", "Priya Natarajn"), ("Kappa Northwind", "Northwind Kappa"),
    ("Natarajan", "Priya Natarajan"), ("IBM", "International Business Machines"),
    ("Acme Printing Division", "Division Acme Printing"), ("Blake", "Quentin Blake"),
]  # fmt: skip
"""Names a cascade step joins, for the constraints to split (or to merge anyway)."""
TYPES = ("Person", "Organization", "Location", "Concept", "Event")


def trigram_embed(texts: Sequence[str]) -> np.ndarray:
    """A deterministic name embedding: signed hashed character trigrams, normalised, so
    near-duplicate names are close ("acme printing division" / "divison")."""
    vectors = np.zeros((len(texts), DIMENSIONS), np.float32)
    for row, text in enumerate(texts):
        padded = f"  {text} "
        for i in range(len(padded) - 2):
            digest = hashlib.md5(padded[i : i + 3].encode()).digest()
            vectors[row, digest[0] % DIMENSIONS] += 1.0 if digest[1] % 2 else -1.0
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def natural_type(name: str) -> str:
    if name in PERSONS or name.split()[-1] in {
        "Natarajan",
        "Chen",
        "Becker",
        "Natarajn",
        "Blake",
        "Ruiz",
    }:
        return "Person"
    if name.startswith(("Rotterdam", "United", "U.S", "US")):
        return "Location"
    if "Olympics" in name:
        return "Event"
    return "Organization"


Step = tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]


def random_steps(seed: int, steps: int) -> Iterator[Step]:
    """A seeded walk over a bag of (surface, type) observations and the user's
    constraints: each step adds, removes, retypes or constrains, then yields the bag
    (shuffled) and the constraints."""
    rng = random.Random(seed)
    bag: Counter[tuple[str, str]] = Counter()
    cannot: set[tuple[str, str]] = set()
    must: set[tuple[str, str]] = set()

    def observation(name: str) -> tuple[str, str]:
        kind = natural_type(name) if rng.random() < 0.85 else rng.choice(TYPES)
        return name, kind

    for _ in range(steps):
        action = rng.choice(["add", "add", "bulk", "remove", "remove", "retype", "link", "link"])
        present = sorted({name for name, _ in bag})
        if len(present) > len(NAMES) // 2 and rng.random() < 0.5:
            action = "remove"  # the bag shrinks too, so blocks fall back under max_block
        if action == "add" or not present:
            bag.update(observation(rng.choice(NAMES)) for _ in range(rng.randint(1, 4)))
        elif action == "bulk":
            bag.update(observation(name) for name in rng.sample(NAMES, 12))
        elif action == "remove":
            for item in rng.sample(sorted(bag), min(len(bag), rng.randint(1, 6))):
                bag[item] -= rng.choice([1, bag[item]])
            bag = +bag
        elif action == "retype":
            name = rng.choice(present)
            kind = rng.choice(TYPES)
            moved = sum(n for (surface, _), n in bag.items() if surface == name)
            bag = Counter({item: n for item, n in bag.items() if item[0] != name})
            bag[(name, kind)] += moved
        else:
            near = [p for p in NEAR_PAIRS if set(p) <= set(present)]
            if near and rng.random() < 0.7:
                pair = rng.choice(near)
            else:
                pair = tuple(rng.sample(present, 2)) if len(present) > 1 else None
            chosen = cannot if rng.random() < 0.6 else must
            if pair and rng.random() < 0.75:
                chosen.add(pair)  # type: ignore[arg-type]
            elif chosen:
                chosen.discard(rng.choice(sorted(chosen)))
        surfaces = list(bag.elements())
        rng.shuffle(surfaces)
        yield surfaces, sorted(cannot), sorted(must)


def oversized_tokens(index: BlockingIndex) -> set[str]:
    sizes = Counter(token for entry in index.keys.values() for token in entry.tokens)
    return {token for token, size in sizes.items() if size > CFG.max_block}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_resolution_equals_the_full_one_after_every_step(seed: int):
    index = None
    methods: Counter[str] = Counter()
    crossed_up, crossed_down = set(), set()
    compared = {"incremental": 0, "full": 0}
    vetoed = 0
    for surfaces, cannot, must in random_steps(seed, 120):
        incremental = resolve_incremental(
            "c", surfaces, index, trigram_embed, CFG, cannot_link=cannot, must_link=must
        )
        full = resolve_incremental(
            "c", surfaces[::-1], None, trigram_embed, CFG, cannot_link=cannot, must_link=must
        )
        assert incremental.resolution == full.resolution
        assert incremental.index == full.index
        if index is not None:
            before, after = oversized_tokens(index), oversized_tokens(incremental.index)
            crossed_up |= after - before
            crossed_down |= (before - after) & {
                t for e in incremental.index.keys.values() for t in e.tokens
            }
            compared["incremental"] += sum(incremental.report.comparisons.values())
            compared["full"] += sum(full.report.comparisons.values())
        methods.update(link.method for link in full.resolution.same_as)
        unconstrained = resolve_incremental("c", surfaces, None, trigram_embed, CFG, [], must)
        vetoed += unconstrained.resolution != full.resolution
        index = incremental.index
    # the walk exercised every step of the cascade and blocks crossing the limit both ways
    assert {"levenshtein", "embedding", "person_surname", "acronym", "must_link"} <= set(methods)
    assert crossed_up and crossed_down
    assert vetoed  # cannot-links kept apart what the cascade would have joined
    assert compared["incremental"] < compared["full"] / 2


def test_a_new_key_is_compared_only_with_the_members_of_its_blocks():
    names = [("Harborview Office", "Organization"), ("Acme Printing Division", "Organization"),
             ("Rotterdam", "Location"), ("Rotterdam Harbour", "Location")]  # fmt: skip
    first = resolve_incremental("c", names, None, trigram_embed, CFG)
    assert first.report.full and first.report.keys_reblocked == 4
    second = resolve_incremental(
        "c", [*names, ("Harbourview Office", "Organization")], first.index, trigram_embed, CFG
    )
    report = second.report
    assert (report.full, report.keys_total, report.keys_new, report.keys_reblocked) == (
        False, 5, 1, 1
    )  # fmt: skip
    new_tokens = set(key_tokens("harbourview office"))
    neighbours = {k for k in first.index.keys if new_tokens & set(key_tokens(k))}
    assert report.comparisons["levenshtein"] == len(neighbours) == 1  # "office"
    methods = {link.key: link.method for link in second.resolution.same_as}
    assert methods["harbourview office"] == "levenshtein"


def test_a_changed_mention_count_reblocks_nothing_and_a_type_change_reblocks_the_key():
    names = [("Harborview Office", "Organization"), ("Harbourview Office", "Organization")]
    first = resolve_incremental("c", names, None, trigram_embed, CFG)
    recounted = resolve_incremental("c", [*names, names[0]], first.index, trigram_embed, CFG)
    assert (recounted.report.keys_changed, recounted.report.keys_reblocked) == (1, 0)
    assert recounted.report.comparisons == {"levenshtein": 0, "embedding": 0}
    retyped = [
        *names[:1] * 2,
        ("Harbourview Office", "Location"),
        ("Harbourview Office", "Location"),
    ]
    moved = resolve_incremental("c", retyped, recounted.index, trigram_embed, CFG)
    assert (moved.report.keys_changed, moved.report.keys_reblocked) == (1, 1)
    assert len(moved.resolution.entities) == 2  # the type guard now keeps them apart
