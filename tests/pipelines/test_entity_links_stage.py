"""The entity-links stage over a real LanceDB: synonyms through the name index, links
written once, a re-run with the same rows keeps the table version, and a re-run with
unchanged inputs is skipped."""

import shutil

import lancedb
import numpy as np
import pyarrow as pa

from pipelines import entity_links
from schemas.tables import VECTOR
from stores.warehouse import Warehouse
from stores.workspace import lance_table_name
from transforms.entity_links import inputs_digest


def _unit(*values: float) -> list[float]:
    vector = np.array(values, dtype=np.float32)
    return list(vector / np.linalg.norm(vector))


TEXT = "NYC and New York City and Boston"
MENTIONS = [
    {
        "surface": s,
        "segment_id": "s1",
        "segment_text": TEXT,
        "char_start": TEXT.index(s),
        "char_end": TEXT.index(s) + len(s),
    }
    for s in ("NYC", "New York City", "Boston")
]
TYPED = [("e1", "e3")]


def test_the_stage_links_synonyms_and_co_occurrences_and_is_idempotent(tmp_path):
    db = lancedb.connect(str(tmp_path))
    names = pa.table(
        {
            "entity_id": ["e1", "e2", "e3"],
            "name": ["NYC", "New York City", "Boston"],
            VECTOR: pa.array(
                [_unit(1, 0.1, 0), _unit(1, 0.12, 0.02), _unit(0, 1, 1)],
                pa.list_(pa.float32(), 3),
            ),
        }
    )
    db.create_table(lance_table_name("c", "names"), names)
    entity_of = {"nyc": "e1", "new york city": "e2", "boston": "e3"}

    first = entity_links.link_entities(MENTIONS, TYPED, entity_of, db, "c")
    stored = db.open_table(lance_table_name("c", "links")).to_arrow().to_pylist()
    kinds = {(r["head_id"], r["tail_id"], r["kind"]) for r in stored}
    # e1-e3 has a typed fact, so it is no co-occurrence
    assert kinds == {("e1", "e2", "co_occurs"), ("e2", "e3", "co_occurs"), ("e1", "e2", "synonym")}
    assert first.by_kind == {"co_occurs": 2, "synonym": 1}

    again = entity_links.link_entities(MENTIONS, TYPED, entity_of, db, "c")
    assert (again.written, again.version) == (0, first.version)


def test_a_single_name_searches_alone_and_links_nothing(tmp_path):
    db = lancedb.connect(str(tmp_path))
    names = pa.table(
        {
            "entity_id": ["e1"],
            "name": ["NYC"],
            VECTOR: pa.array([_unit(1, 0, 0)], pa.list_(pa.float32(), 3)),
        }
    )
    db.create_table(lance_table_name("c", "names"), names)
    outcome = entity_links.link_entities([], [], {"nyc": "e1"}, db, "c")
    assert outcome.by_kind == {} and outcome.names == 1


def test_many_names_are_searched_through_an_index_and_keep_their_synonyms(tmp_path, monkeypatch):
    monkeypatch.setattr(entity_links, "NAME_INDEX_MIN_ROWS", 64)
    rng = np.random.default_rng(0)
    base = rng.normal(size=(100, 8)).astype(np.float32)
    near = base[:10] + 0.01 * rng.normal(size=(10, 8)).astype(np.float32)
    vectors = np.vstack([base, near])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"e{i:03d}" for i in range(110)]
    db = lancedb.connect(str(tmp_path))
    db.create_table(
        lance_table_name("c", "names"),
        pa.table(
            {
                "entity_id": ids,
                "name": ids,
                VECTOR: pa.array(list(vectors), pa.list_(pa.float32(), 8)),
            }
        ),
    )
    outcome = entity_links.link_entities([], [], {}, db, "c")
    assert db.open_table(lance_table_name("c", "names")).list_indices(), "names were indexed"
    stored = db.open_table(lance_table_name("c", "links")).to_arrow().to_pylist()
    assert {(r["head_id"], r["tail_id"]) for r in stored} >= {
        (ids[i], ids[100 + i]) for i in range(10)
    }
    assert outcome.by_kind["synonym"] >= 10


def test_the_inputs_digest_ignores_order_and_sees_every_input() -> None:
    ids, vectors = ["e1", "e2", "e3"], np.eye(3, dtype=np.float32)
    entity_of = {"nyc": "e1", "new york city": "e2", "boston": "e3"}
    digest = inputs_digest(MENTIONS, TYPED, entity_of, ids, vectors)
    assert inputs_digest(MENTIONS[::-1], TYPED[::-1], entity_of, ids, vectors) == digest
    moved = [{**MENTIONS[0], "char_end": MENTIONS[0]["char_end"] - 1}, *MENTIONS[1:]]
    nudged = vectors.copy()
    nudged[2, 2] = np.nextafter(np.float32(1), np.float32(2))
    for changed in (
        inputs_digest(moved, TYPED, entity_of, ids, vectors),
        inputs_digest(MENTIONS, [("e1", "e2")], entity_of, ids, vectors),
        inputs_digest(MENTIONS, TYPED, {**entity_of, "ny": "e1"}, ids, vectors),
        inputs_digest(MENTIONS, TYPED, entity_of, ids, nudged),
    ):
        assert changed != digest


def test_the_stage_keeps_its_links_while_its_inputs_are_unchanged(graph_build, tmp_path) -> None:
    """On a copy of the sample build: a re-run finds the inputs the build recorded and
    keeps the links table as it is, without searching the names; a changed mention, or a
    links table gone, makes it compute the links again."""
    root = tmp_path / "home"
    shutil.copytree(graph_build.root, root, ignore=shutil.ignore_patterns("dagster"))
    warehouse = Warehouse(str(root))
    db, links = warehouse.workspace.lance(), lance_table_name("sample", "links")
    version = db.open_table(links).version

    def computed() -> bool:
        return "links_by_kind" in entity_links.run(warehouse, "sample").details

    assert not computed(), "the build recorded the stage's inputs"
    assert db.open_table(links).version == version
    with warehouse.connect() as con:
        con.execute(
            "DELETE FROM entity_mentions WHERE collection = ? AND segment_id = "
            "(SELECT min(segment_id) FROM entity_mentions WHERE collection = ?)",
            ["sample", "sample"],
        )
    assert computed() and not computed()
    db.drop_table(links)
    assert computed() and links in db.table_names()
