"""A synthetic memory workspace of N facts, written directly (no pipeline), for latency runs.

The retrieval latency benchmark needs graphs far larger than the sample corpus (100k and
1M facts) on a 2-core machine, so this module writes the stores a build would leave behind
without running any stage: DuckDB `entities`, `entity_aliases`, `fact_version_log` (bulk
inserted from Arrow, never row by row), the LanceDB `segments`, `entities` and `facts`
tables of `schemas.tables` plus a `vector` column, their indexes, and a snapshot row
(`stores.snapshots.record_snapshot`), so `Memory.open` and every strategy run on it
unchanged.

Choices (nothing here comes from a paper):
- Vectors are seeded random unit vectors of MiniLM's width (384), not embeddings:
  embedding 1M texts with MiniLM on CPU takes hours, and the benchmark measures latency,
  not quality. Queries are still embedded with the real MiniLM at query time.
- Entities: one per 4 facts (mean degree 8), typed with the KGERMAR types (45 % Person,
  20 % Organization, 10 % Location, 15 % Concept, 10 % Event). Names are generated and
  distinct by construction: a word of two or more consonant-vowel syllables (a unique
  word per integer) combined with a first name, an organisation suffix, a concept noun or
  an event noun, one fixed shape per type so that names of different types never collide.
- Facts: a relation inventory typed by head and tail (`RELATIONS`); heads and tails are
  drawn from a Zipf law over each type's entities (weight rank^-`ZIPF_EXPONENT`, 0.75,
  i.e. a degree power law with hubs such as big cities), duplicates and self-loops
  redrawn until exactly N distinct (head, relation, tail) triples exist.
- Time: each fact has one version; valid_from is uniform over 2015-2025, and facts of a
  single-valued relation (work_at, live_in, ...) that share a head follow one another
  (each one's valid_to is the next one's valid_from), as a fold would leave them.
  Confidence is uniform in [0.8, 1) for 90 % of facts and in [0.5, 0.8) for the rest
  (below θ_stable: only speculative queries see them).
- Segments: the facts of one head, in order, grouped by up to `FACTS_PER_SEGMENT` (3)
  into one chunk of "X works at Y." sentences whose `entity_ids` are the entities named;
  each fact cites its segment. One document per head entity.
- Indexes: `stores.lance_tables.build_indexes`, as the pipeline builds them: IVF_PQ on
  the vector column of every table with at least `VECTOR_INDEX_MIN_ROWS` (100k) rows, and
  LanceDB's native full-text index on segment text and fact statements.

`LANCE_KINDS` of `stores.snapshots` is read at run time: every kind a snapshot pins must
have a writer here (`contexts`: KGERMAR entity context windows; `structure`: per-entity
structural vectors; each written only if that kind exists), and
an unknown kind fails with a message naming it rather than writing a snapshot that
strategies could not open.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import lancedb
import numpy as np
import polars as pl
import pyarrow as pa

from schemas.tables import (
    EMBEDDING_DIM,
    LANCE_ENTITIES,
    LANCE_ENTITY_CONTEXTS,
    LANCE_ENTITY_LINKS,
    LANCE_FACTS,
    LANCE_SEGMENTS,
)
from stores import snapshots
from stores.lance_tables import build_indexes
from stores.workspace import Workspace, lance_table_name
from transforms.consolidation import normalize_name
from transforms.embedding import DEFAULT_ENCODER
from transforms.entity_contexts import context_window
from transforms.entity_links import CO_OCCURS, COOCCURRENCE_WEIGHT, link_row
from transforms.facts import THETA_STABLE
from transforms.graph_links import entity_description, fact_statement
from transforms.structural_bank import HASH_COLUMN

GENERATOR_VERSION = 2
"""Bumped when the generated content changes, so cached workspaces are regenerated."""
COLLECTION = "synthetic"
WRITTEN_KINDS = frozenset({"segments", "entities", "facts", "contexts", "structure", "links"})
"""Snapshot table kinds this generator can write."""
ENTITIES_PER_FACT = 0.25
ZIPF_EXPONENT = 0.75
FACTS_PER_SEGMENT = 3
UNSTABLE_SHARE = 0.1
BATCH_ROWS = 65_536
EPOCH = datetime(2015, 1, 1, tzinfo=UTC)
SPAN_DAYS = 3_650

TYPE_SHARES = {
    "Person": 0.45,
    "Organization": 0.20,
    "Location": 0.10,
    "Concept": 0.15,
    "Event": 0.10,
}


@dataclass(frozen=True)
class Relation:
    """One relation of the inventory: its typed ends, cardinality, sentence and question."""

    name: str
    head_type: str
    tail_type: str
    cardinality: str
    sentence: str
    question: str
    weight: float


RELATIONS = (
    Relation("work_at", "Person", "Organization", "single", "{h} works at {t}.",
             "Where does {h} work?", 3.0),
    Relation("live_in", "Person", "Location", "single", "{h} lives in {t}.",
             "Where does {h} live?", 2.0),
    Relation("locate_in", "Organization", "Location", "single", "{h} is located in {t}.",
             "Where is {h} located?", 1.0),
    Relation("lead", "Person", "Organization", "single_by_tail", "{h} leads {t}.",
             "Who leads {t}?", 0.5),
    Relation("know", "Person", "Person", "multi", "{h} knows {t}.",
             "Who does {h} know?", 2.0),
    Relation("part_of", "Organization", "Organization", "multi", "{h} is part of {t}.",
             "What is {h} part of?", 0.5),
    Relation("like", "Person", "Concept", "multi", "{h} likes {t}.",
             "What does {h} like?", 1.5),
    Relation("attend", "Person", "Event", "multi", "{h} attended {t}.",
             "Which events did {h} attend?", 1.0),
    Relation("take_place_in", "Event", "Location", "single", "{h} took place in {t}.",
             "Where did {h} take place?", 0.5),
    Relation("related_to", "Concept", "Concept", "multi", "{h} is related to {t}.",
             "What is {h} related to?", 0.5),
)  # fmt: skip

FIRST_NAMES = (
    "Ada", "Amir", "Anna", "Bruno", "Carla", "Chen", "Dana", "Diego", "Elif", "Emma", "Farid",
    "Greta", "Hana", "Ivan", "Jonas", "Kofi", "Lena", "Luis", "Maya", "Nadia", "Omar", "Priya",
    "Rosa", "Sami", "Tariq", "Uma", "Vera", "Wei", "Yara", "Zoe", "Arjun", "Ines", "Kenji",
    "Leila", "Mateo", "Noor", "Oskar", "Pavel", "Rhea", "Sofia",
)  # fmt: skip
ORG_SUFFIXES = (
    "Labs", "Logistics", "Systems", "Holdings", "Partners", "Works", "Foundation", "Institute",
    "Bank", "Studios", "Robotics", "Foods",
)  # fmt: skip
CONCEPT_NOUNS = ("theory", "method", "protocol", "principle", "framework", "algorithm")
EVENT_NOUNS = ("Summit", "Festival", "Conference", "Expo", "Marathon", "Symposium")
CONSONANTS = "bdfghklmnprstvz"
VOWELS = "aeiou"
SYLLABLES = tuple(c + v for c in CONSONANTS for v in VOWELS)


@dataclass(frozen=True)
class SyntheticSummary:
    """What was written: the workspace, counts per table and the snapshot id."""

    root: str
    collection: str
    facts: int
    entities: int
    segments: int
    fact_versions: int
    snapshot_id: str
    seconds: float
    seed: int
    version: int = GENERATOR_VERSION

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def word(index: int) -> str:
    """A pronounceable word unique to `index` (its base-75 digits as CV syllables, at least
    two; fixed-width syllables make the spelling decode back to one number)."""
    digits, n = [], index + len(SYLLABLES)
    while n:
        n, digit = divmod(n, len(SYLLABLES))
        digits.append(SYLLABLES[digit])
    return "".join(reversed(digits)).capitalize()


def entity_name(entity_type: str, index: int) -> str:
    """The distinct name of the `index`-th entity of `entity_type`: one shape per type, and
    each type's words from its own residue class of the word numbers, so a surname is
    never also a city."""
    lane = list(TYPE_SHARES).index(entity_type)

    def typed_word(n: int) -> str:
        return word(n * len(TYPE_SHARES) + lane)

    if entity_type == "Person":
        rest, first = divmod(index, len(FIRST_NAMES))
        return f"{FIRST_NAMES[first]} {typed_word(rest)}"
    if entity_type == "Organization":
        rest, suffix = divmod(index, len(ORG_SUFFIXES))
        return f"{typed_word(rest)} {ORG_SUFFIXES[suffix]}"
    if entity_type == "Location":
        return typed_word(index)
    if entity_type == "Concept":
        rest, noun = divmod(index, len(CONCEPT_NOUNS))
        return f"{typed_word(rest)} {CONCEPT_NOUNS[noun]}"
    rest, noun = divmod(index, len(EVENT_NOUNS))
    return f"{typed_word(rest)} {EVENT_NOUNS[noun]} {2000 + rest % 25}"


def hex_ids(prefix: int, count: int) -> list[str]:
    """`count` distinct 16-digit hex ids; `prefix` (1-15) keeps the id spaces of tables apart."""
    return [f"{prefix:x}{i:015x}" for i in range(count)]


def make_entities(n_entities: int) -> pl.DataFrame:
    """Entities with ids, distinct names and types, in type blocks (position = row)."""
    counts = {t: max(2, round(share * n_entities)) for t, share in TYPE_SHARES.items()}
    types = [t for t, c in counts.items() for _ in range(c)]
    names = [entity_name(t, i) for t, c in counts.items() for i in range(c)]
    return pl.DataFrame(
        {"entity_id": hex_ids(1, len(types)), "name": names, "entity_type": types}
    ).with_row_index("position")


def _zipf_sampler(rng: np.random.Generator, positions: np.ndarray) -> Callable[[int], np.ndarray]:
    """Draws of entity positions with probability ∝ rank^-ZIPF_EXPONENT (ranks shuffled)."""
    ranked = rng.permutation(positions)
    weights = np.arange(1, len(ranked) + 1, dtype=np.float64) ** -ZIPF_EXPONENT
    cumulative = np.cumsum(weights / weights.sum())
    cumulative[-1] = 1.0

    def draw(size: int) -> np.ndarray:
        return ranked[np.searchsorted(cumulative, rng.random(size), side="right")]

    return draw


def make_triples(n_facts: int, entities: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    """Exactly `n_facts` distinct (head, relation, tail) position triples, no self-loops."""
    types = entities.get_column("entity_type").to_numpy()
    samplers = {t: _zipf_sampler(rng, np.flatnonzero(types == t)) for t in TYPE_SHARES}
    weights = np.array([r.weight for r in RELATIONS])
    parts: list[pl.DataFrame] = []
    have = 0
    while have < n_facts:
        want = int((n_facts - have) * 1.15) + 16
        relation = rng.choice(len(RELATIONS), size=want, p=weights / weights.sum())
        head = np.empty(want, dtype=np.int64)
        tail = np.empty(want, dtype=np.int64)
        for index, rel in enumerate(RELATIONS):
            chosen = relation == index
            head[chosen] = samplers[rel.head_type](int(chosen.sum()))
            tail[chosen] = samplers[rel.tail_type](int(chosen.sum()))
        batch = pl.DataFrame({"head": head, "relation_index": relation, "tail": tail})
        parts.append(batch.filter(pl.col("head") != pl.col("tail")))
        merged = pl.concat(parts).unique(maintain_order=True)
        parts, have = [merged], merged.height
    return parts[0].head(n_facts)


def _end_names(names: pl.DataFrame, end: str) -> pl.DataFrame:
    """Entity id and name columns renamed for one end ("head" or "tail") of a fact."""
    return names.rename({"position": end, "entity_id": f"{end}_entity_id", "name": f"{end}_name"})


def make_facts(n_facts: int, entities: pl.DataFrame, rng: np.random.Generator) -> pl.DataFrame:
    """Facts with names, relation, confidence, valid interval and their segment grouping."""
    triples = make_triples(n_facts, entities, rng)
    relations = pl.DataFrame(
        {
            "relation_index": np.arange(len(RELATIONS)),
            "relation": [r.name for r in RELATIONS],
            "cardinality": [r.cardinality for r in RELATIONS],
            "sentence": [r.sentence for r in RELATIONS],
        }
    )
    names = entities.select("position", "entity_id", "name")
    unstable = rng.random(n_facts) < UNSTABLE_SHARE
    confidence = np.where(unstable, rng.uniform(0.5, 0.8, n_facts), rng.uniform(0.8, 1.0, n_facts))
    days = rng.integers(0, SPAN_DAYS, n_facts)
    facts = (
        triples.with_columns(
            pl.col("relation_index").cast(pl.Int64),
            confidence=pl.Series(np.round(confidence, 4)),
            valid_from=pl.lit(EPOCH) + pl.duration(days=pl.Series(days)),
        )
        .join(relations.with_columns(pl.col("relation_index").cast(pl.Int64)), on="relation_index")
        .join(_end_names(names, "head"), on="head")
        .join(_end_names(names, "tail"), on="tail")
        .sort("head", "relation", "valid_from")
        .with_columns(fact_id=pl.Series(hex_ids(2, n_facts)))
    )
    ends = facts.select("head_name", "relation", "tail_name").iter_rows()
    facts = facts.with_columns(statement=pl.Series([fact_statement(*end) for end in ends]))
    successor = pl.col("valid_from").shift(-1).over("head", "relation")
    single = pl.col("cardinality") == "single"
    within = pl.int_range(pl.len()).over("head") // FACTS_PER_SEGMENT
    facts = facts.with_columns(within=within)
    starts = (pl.col("head") != pl.col("head").shift(1)) | (
        pl.col("within") != pl.col("within").shift(1)
    )
    return facts.with_columns(
        valid_to=pl.when(single).then(successor).otherwise(None),
        segment_key=starts.fill_null(True).cum_sum() - 1,
        sentence_text=pl.col("sentence")
        .str.replace("{h}", pl.col("head_name"), literal=True)
        .str.replace("{t}", pl.col("tail_name"), literal=True),
    )  # fmt: skip


def make_segments(facts: pl.DataFrame) -> pl.DataFrame:
    """One chunk per group of facts: their sentences, the entities they name, first date,
    and its document node (the structural node every titled chunk has)."""
    grouped = (
        facts.group_by("segment_key")
        .agg(
            text=pl.col("sentence_text").str.join(" "),
            head_entity_id=pl.col("head_entity_id").first(),
            head_name=pl.col("head_name").first(),
            observed_at=pl.col("valid_from").min(),
            entity_ids=pl.concat_list("head_entity_id", "tail_entity_id").flatten().unique().sort(),
        )
        .sort("segment_key")
    )
    return grouped.select(
        segment_id=pl.Series(hex_ids(3, grouped.height)),
        doc_id=pl.lit("5") + pl.col("head_entity_id").str.slice(1),
        kind=pl.lit("chunk"),
        text="text",
        char_start=pl.lit(0, pl.Int32),
        char_end=pl.col("text").str.len_chars().cast(pl.Int32),
        speaker=pl.lit(None, pl.String),
        session_id=pl.lit(None, pl.String),
        turn_id=pl.lit(None, pl.String),
        observed_at="observed_at",
        mentioned_from=pl.lit(None, pl.Datetime("us", "UTC")),
        mentioned_to=pl.lit(None, pl.Datetime("us", "UTC")),
        title="head_name",
        source_path=pl.lit(f"synthetic://{COLLECTION}"),
        entity_ids="entity_ids",
        search_text=pl.col("head_name") + pl.lit("\n") + pl.col("text"),
        node_ids=pl.concat_list(pl.lit("document:5") + pl.col("head_entity_id").str.slice(1)),
        next_segment_id=pl.lit(None, pl.String),
        segment_key="segment_key",
    )


def random_unit_vectors(rng: np.random.Generator, rows: int, dim: int = EMBEDDING_DIM) -> pa.Array:
    """`rows` seeded random unit vectors as a FixedSizeList<float32> column."""
    vectors = rng.standard_normal((rows, dim), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), dim)


def _with_vectors(table: pa.Table, schema: pa.Schema, seed: int) -> pa.RecordBatchReader:
    """`table` cast to `schema` plus a random `vector` column, produced batch by batch so
    that 1M vectors never sit in memory at once."""
    rng = np.random.default_rng(seed)
    rows = table.select(schema.names).cast(schema)
    full = schema.append(pa.field("vector", pa.list_(pa.float32(), EMBEDDING_DIM)))

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in rows.to_batches(max_chunksize=BATCH_ROWS):
            vectors = random_unit_vectors(rng, batch.num_rows)
            yield pa.RecordBatch.from_arrays([*batch.columns, vectors], schema=full)

    return pa.RecordBatchReader.from_batches(full, batches())


def write_lance(
    db: lancedb.DBConnection,
    kind: str,
    table: pa.Table,
    schema: pa.Schema,
    seed: int,
    fts_column: str | None = None,
) -> None:
    """Create the collection's `kind` table with vectors and its indexes."""
    created = db.create_table(
        lance_table_name(COLLECTION, kind), _with_vectors(table, schema, seed)
    )
    build_indexes(created, fts_column)


STRUCTURE = pa.schema(
    [
        ("entity_id", pa.string()),
        ("structural", pa.list_(pa.float32(), EMBEDDING_DIM)),
        ("gate", pa.float32()),
        (HASH_COLUMN, pa.string()),
    ]
)
"""The "structure" table as `transforms.structural_bank.structural_rows` writes it, less the
`vector` column that `write_lance` adds (R-GCN output width = text width)."""


def _write_structure(
    db: lancedb.DBConnection, entities: pl.DataFrame, facts: pl.DataFrame, seed: int
) -> None:
    """KGERMAR's structural bank without training: random unit `structural` and fused
    `vector` columns, a random gate, and the hash of the synthetic fact graph."""
    digest = hashlib.sha256()
    for column in ("head_entity_id", "relation", "tail_entity_id"):
        digest.update(facts.get_column(column).str.join("\n").item().encode())
    rng = np.random.default_rng(seed)
    table = pa.table(
        {
            "entity_id": entities.get_column("entity_id").to_arrow(),
            "structural": random_unit_vectors(rng, entities.height),
            "gate": pa.array(rng.random(entities.height, dtype=np.float32)),
            HASH_COLUMN: pa.array([digest.hexdigest()] * entities.height),
        }
    )
    write_lance(db, "structure", table, STRUCTURE, seed + 1)


def _write_links(db: lancedb.DBConnection, segments: pl.DataFrame, facts: pl.DataFrame) -> None:
    """Co-occurrence links (`transforms.entity_links`) of the entities one synthetic chunk
    names that no fact joins; a chunk is a few short sentences, so the whole chunk stands
    for KGERMAR's window. No synonym links: synthetic names are distinct by construction."""
    named = segments.select("segment_id", "entity_ids").explode("entity_ids")
    pairs = (
        named.join(named, on="segment_id", suffix="_other")
        .filter(pl.col("entity_ids") < pl.col("entity_ids_other"))
        .select(head=pl.col("entity_ids"), tail=pl.col("entity_ids_other"))
        .unique()
    )
    typed = facts.select(
        head=pl.min_horizontal("head_entity_id", "tail_entity_id"),
        tail=pl.max_horizontal("head_entity_id", "tail_entity_id"),
    ).unique()
    untyped = pairs.join(typed, on=["head", "tail"], how="anti").sort("head", "tail")
    rows = [link_row(a, b, CO_OCCURS, COOCCURRENCE_WEIGHT) for a, b in untyped.iter_rows()]
    db.create_table(
        lance_table_name(COLLECTION, "links"), pa.Table.from_pylist(rows, schema=LANCE_ENTITY_LINKS)
    )


def _write_contexts(
    db: lancedb.DBConnection, segments: pl.DataFrame, facts: pl.DataFrame, seed: int
) -> None:
    """KGERMAR entity contexts (the `contexts` kind): for every entity named by a fact, the
    marked `CONTEXT_TOKENS` window around its first mention (lowest segment id), as
    `transforms.entity_contexts` writes them; entities in no fact have none, as entities
    without mentions have none in a build. Vectors are random like every other here."""
    mentions = (
        pl.concat(
            [
                facts.select("segment_id", entity_id=f"{end}_entity_id", name=f"{end}_name")
                for end in ("head", "tail")
            ]
        )
        .sort("segment_id", "entity_id")
        .unique("entity_id", keep="first")
        .sort("entity_id")
        .join(segments.select("segment_id", "text"), on="segment_id")
    )
    windows = []
    for name, text in mentions.select("name", "text").iter_rows():
        start, end = re.search(rf"\b{re.escape(name)}\b", text).span()  # a whole-word mention
        windows.append(context_window(text, start, end))
    table = pa.table(
        {
            "entity_id": mentions.get_column("entity_id").to_arrow(),
            "contexts": pa.array(windows, pa.string()),
        }
    )
    write_lance(db, "contexts", table, LANCE_ENTITY_CONTEXTS, seed)


def _check_kinds() -> None:
    unknown = sorted(set(snapshots.LANCE_KINDS) - WRITTEN_KINDS)
    if unknown:
        raise ValueError(
            f"stores.snapshots.LANCE_KINDS pins table kind(s) {unknown} that the synthetic "
            "generator cannot write; add a writer to benchmarks/synthetic_memory.py"
        )


def _write_warehouse(workspace: Workspace, entities: pl.DataFrame, facts: pl.DataFrame) -> None:
    """Entities, aliases and one fact version per fact, bulk inserted from Arrow."""
    recorded = datetime.now(UTC)
    entity_rows = entities.select(
        "entity_id",
        collection=pl.lit(COLLECTION),
        name="name",
        entity_type="entity_type",
        norm_key=pl.Series([normalize_name(n) for n in entities.get_column("name")]),
        mention_count=pl.lit(1, pl.Int32),
    ).to_arrow()
    alias_rows = entities.select(
        collection=pl.lit(COLLECTION), entity_id="entity_id", alias="name",
        mention_count=pl.lit(1, pl.Int32),
    ).to_arrow()  # fmt: skip
    versions = facts.select(
        version_id=pl.lit("4") + pl.col("fact_id").str.slice(1),
        fact_id="fact_id",
        collection=pl.lit(COLLECTION),
        head_entity_id="head_entity_id",
        head_name="head_name",
        relation="relation",
        tail_entity_id="tail_entity_id",
        tail_name="tail_name",
        confidence="confidence",
        valid_from="valid_from",
        valid_to="valid_to",
        recorded_from=pl.lit(recorded),
        operation=pl.lit("insert"),
        supersedes=pl.lit(None, pl.String),
        source_segment_ids=pl.concat_list("segment_id"),
        extractor=pl.lit("synthetic"),
        cardinality="cardinality",
    ).to_arrow()
    con = workspace.connect()
    try:
        con.execute(
            "INSERT OR REPLACE INTO collections VALUES (?, ?, ?)",
            [COLLECTION, json.dumps(["synthetic"]), recorded],
        )
        for table, rows in (
            ("entities", entity_rows),
            ("entity_aliases", alias_rows),
            ("fact_version_log", versions),
        ):
            con.register("incoming", rows)
            con.execute(f"INSERT INTO {table} SELECT * FROM incoming")
            con.unregister("incoming")
    finally:
        con.close()


def generate(
    root: str | Path,
    n_facts: int,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> SyntheticSummary:
    """Write a fresh synthetic workspace of `n_facts` facts at `root` (replacing it)."""
    import time

    if n_facts < 10:
        raise ValueError(f"a synthetic memory needs at least 10 facts, got {n_facts}")
    _check_kinds()
    say = progress or (lambda _step: None)
    started = time.perf_counter()
    root = Path(root)
    if root.exists():
        shutil.rmtree(root)
    workspace = Workspace.at(root)
    rng = np.random.default_rng(seed)

    say("entities and facts")
    entities = make_entities(max(20, round(n_facts * ENTITIES_PER_FACT)))
    facts = make_facts(n_facts, entities, rng)
    segments = make_segments(facts)
    facts = facts.join(segments.select("segment_key", "segment_id"), on="segment_key")

    say("warehouse")
    _write_warehouse(workspace, entities, facts)

    db = workspace.lance()
    say(f"segments ({segments.height:,} rows, vectors and indexes)")
    write_lance(db, "segments", segments.to_arrow(), LANCE_SEGMENTS, seed + 1, "search_text")
    say(f"entities ({entities.height:,} rows)")
    described = entities.with_columns(
        aliases=pl.concat_list("name"),
        description=pl.Series(
            [entity_description(n, t, []) for n, t in entities.select("name", "entity_type").rows()]
        ),
    )
    write_lance(db, "entities", described.to_arrow(), LANCE_ENTITIES, seed + 2)
    say(f"facts ({facts.height:,} rows)")
    write_lance(db, "facts", facts.to_arrow(), LANCE_FACTS, seed + 3, "statement")
    if "contexts" in snapshots.LANCE_KINDS:
        say(f"contexts ({entities.height:,} entities)")
        _write_contexts(db, segments, facts, seed + 5)
    if "structure" in snapshots.LANCE_KINDS:
        say("structure")
        _write_structure(db, entities, facts, seed + 4)
    if "links" in snapshots.LANCE_KINDS:
        say("entity links")
        _write_links(db, segments, facts)

    say("snapshot")
    con = workspace.connect()
    try:
        snapshot, _ = snapshots.record_snapshot(con, db, COLLECTION, DEFAULT_ENCODER)
        counts = snapshot.counts
    finally:
        con.close()
    return SyntheticSummary(
        root=str(workspace.root),
        collection=COLLECTION,
        facts=counts["facts"],
        entities=counts["entities"],
        segments=counts["segments"],
        fact_versions=counts["fact_versions"],
        snapshot_id=snapshot.snapshot_id,
        seconds=round(time.perf_counter() - started, 2),
        seed=seed,
    )


MARKER = "synthetic.json"
"""Written last into a generated workspace: its summary, so a cached one can be reused."""


def cached(
    root: str | Path, n_facts: int, seed: int = 0, progress: Callable[[str], None] | None = None
) -> SyntheticSummary:
    """The synthetic workspace at `root`, generated only if absent, incomplete or stale."""
    marker = Path(root) / MARKER
    if marker.exists():
        found = json.loads(marker.read_text())
        if (found.get("facts"), found.get("seed"), found.get("version")) == (
            n_facts,
            seed,
            GENERATOR_VERSION,
        ):
            return SyntheticSummary(**found)
    summary = generate(root, n_facts, seed, progress)
    marker.write_text(json.dumps(summary.as_dict(), indent=2))
    return summary


QUESTIONS_SQL = """
SELECT head_name, relation, tail_name FROM fact_version_log
WHERE collection = ? AND confidence >= ?
ORDER BY hash(version_id || ?) LIMIT ?
"""


def synthetic_questions(con: duckdb.DuckDBPyConnection, count: int, seed: int = 0) -> list[str]:
    """`count` questions on stable facts of the synthetic collection, in a seeded order:
    even ones name one entity (the relation's question), odd ones both ends of a fact."""
    templates = {r.name: r.question for r in RELATIONS}
    rows = con.execute(QUESTIONS_SQL, [COLLECTION, THETA_STABLE, str(seed), count]).fetchall()
    if not rows:
        raise LookupError(f"no stable facts in collection {COLLECTION!r} to ask about")
    questions = []
    for index in range(count):
        head, relation, tail = rows[index % len(rows)]
        if index % 2:
            questions.append(f"How is {head} connected to {tail}?")
        else:
            questions.append(templates[relation].format(h=head, t=tail))
    return questions
