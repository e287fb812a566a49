"""Hand-made documents in the Re-DocRED layout, shared by the extraction tests."""

from __future__ import annotations

import json
import random
from pathlib import Path

TINY = {
    "title": "Acme",
    "sents": [
        ["Acme", "Corp", "(", "founded", "1999", ")", "is", "based", "in", "Rotterdam", "."],
        ["Its", "CEO", ",", "Maria", "Lopez", ",", "said", '"', "hello", '"', "."],
    ],
    "vertexSet": [
        [{"name": "Acme Corp", "pos": [0, 2], "sent_id": 0, "type": "ORG"}],
        [{"name": "1999", "pos": [4, 5], "sent_id": 0, "type": "TIME"}],
        [{"name": "Rotterdam", "pos": [9, 10], "sent_id": 0, "type": "LOC"}],
        [{"name": "Maria Lopez", "pos": [3, 5], "sent_id": 1, "type": "PER"}],
    ],
    "labels": [
        {"h": 0, "t": 2, "r": "P159", "evidence": [0]},
        {"h": 2, "t": 0, "r": "P150", "evidence": []},
        {"h": 3, "t": 0, "r": "P108", "evidence": [1]},
        {"h": 0, "t": 1, "r": "P571", "evidence": [0]},
    ],
}
TINY_TEXT = 'Acme Corp (founded 1999) is based in Rotterdam. Its CEO, Maria Lopez, said "hello".'

_ORGS = ["Acme", "Brightline", "Zenith", "Norwind", "Castell", "Orbis", "Helio", "Quanta"]
_PLACES = ["Rotterdam", "Oslo", "Lyon", "Porto", "Leeds", "Gdansk", "Turin", "Malmo"]
_PEOPLE = ["Maria", "Priya", "Omar", "Lena", "Tomas", "Aiko", "Ravi", "Ines"]


def synthetic_records(count: int, seed: int = 0) -> list[dict]:
    """`count` documents of three sentences: an ORG located in a LOC (P131), a PER member
    of an ORG (P463), and two PERs that merely met (no relation)."""
    rng = random.Random(seed)
    records = []
    for _ in range(count):
        org, other_org = rng.sample(_ORGS, 2)
        place = rng.choice(_PLACES)
        person, other, third = rng.sample(_PEOPLE, 3)
        sents = [
            [org, "is", "located", "in", place, "."],
            [person, "is", "a", "member", "of", other_org, "."],
            [other, "met", third, "yesterday", "."],
        ]
        spans = [
            (0, 0, "ORG"),
            (0, 4, "LOC"),
            (1, 0, "PER"),
            (1, 5, "ORG"),
            (2, 0, "PER"),
            (2, 2, "PER"),
        ]
        vertex_set = [
            [{"name": sents[s][p], "pos": [p, p + 1], "sent_id": s, "type": t}] for s, p, t in spans
        ]
        labels = [
            {"h": 0, "t": 1, "r": "P131", "evidence": [0]},
            {"h": 2, "t": 3, "r": "P463", "evidence": [1]},
        ]
        title = f"{org} {person} {len(records)}"
        records.append({"title": title, "sents": sents, "vertexSet": vertex_set, "labels": labels})
    return records


def write_records(records: list[dict], path: Path) -> Path:
    path.write_text(json.dumps(records))
    return path
