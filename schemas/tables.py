"""Arrow schemas and column lists of every table kgmem writes.

Stages exchange Parquet (Beam) and DuckDB / LanceDB tables; all of them take their
shapes from here, so a column rename happens in exactly one place.
"""

from __future__ import annotations

from enum import StrEnum

import pyarrow as pa

TIMESTAMP = pa.timestamp("us", tz="UTC")
"""Every time column: microseconds, UTC."""

EMBEDDING_DIM = 384
"""Width of the packaged all-MiniLM-L6-v2 sentence embeddings."""

SEGMENT_KINDS = ("chunk", "turn", "session")
"""`chunk`: sentence-aware piece of a document; `turn`: one conversation turn;
`session`: a whole conversation session (kept for session-level provenance)."""

EXTRACTABLE_KINDS = ("chunk", "turn")
"""Segment kinds that NER, relation extraction and retrieval run on (sessions would
repeat their turns)."""

DOCUMENTS = pa.schema(
    [
        ("doc_id", pa.string()),
        ("collection", pa.string()),
        ("source_path", pa.string()),
        ("record_ref", pa.string()),
        ("kind", pa.string()),  # "document" | "conversation"
        ("title", pa.string()),
        ("text", pa.string()),
        ("doc_time", TIMESTAMP),
        ("turns_json", pa.string()),  # conversations: JSON list of turns, else null
    ]
)

SEGMENTS = pa.schema(
    [
        ("segment_id", pa.string()),
        ("collection", pa.string()),
        ("doc_id", pa.string()),
        ("kind", pa.string()),
        ("seq", pa.int32()),
        ("text", pa.string()),
        ("char_start", pa.int32()),
        ("char_end", pa.int32()),
        ("speaker", pa.string()),
        ("session_id", pa.string()),
        ("turn_id", pa.string()),
        ("observed_at", TIMESTAMP),
        ("mentioned_from", TIMESTAMP),
        ("mentioned_to", TIMESTAMP),
    ]
)
"""`observed_at`: when the segment was said or written; `mentioned_from`/`mentioned_to`: the
span of the years it talks about (transforms.temporal_mentions), null if it names none."""

MENTION = pa.struct(
    [
        ("text", pa.string()),
        ("label", pa.string()),
        ("entity_type", pa.string()),
        ("char_start", pa.int32()),
        ("char_end", pa.int32()),
    ]
)

ENTITY_MENTIONS = pa.schema(
    [
        ("mention_id", pa.string()),
        ("collection", pa.string()),
        ("segment_id", pa.string()),
        ("doc_id", pa.string()),
        ("text", pa.string()),
        ("label", pa.string()),  # the model's own label (e.g. spaCy ORG)
        ("entity_type", pa.string()),  # KGERMAR type, see transforms.entity_types
        ("char_start", pa.int32()),  # offsets into the segment text
        ("char_end", pa.int32()),
        ("doc_char_start", pa.int32()),  # offsets into the document text
        ("doc_char_end", pa.int32()),
        ("model", pa.string()),
    ]
)

SEGMENT_PHRASES = pa.schema(
    [
        ("collection", pa.string()),
        ("doc_id", pa.string()),
        ("segment_id", pa.string()),
        ("phrase", pa.string()),  # lemmatised common-noun phrase, see transforms.phrases
    ]
)

RELATION_CANDIDATES = pa.schema(
    [
        ("candidate_id", pa.string()),
        ("collection", pa.string()),
        ("segment_id", pa.string()),
        ("doc_id", pa.string()),
        ("head_text", pa.string()),
        ("head_start", pa.int32()),
        ("head_end", pa.int32()),
        ("relation", pa.string()),
        ("tail_text", pa.string()),
        ("tail_start", pa.int32()),
        ("tail_end", pa.int32()),
        ("negated", pa.bool_()),
        ("confidence", pa.float32()),
        ("pattern", pa.string()),
        ("extractor", pa.string()),
    ]
)

SEGMENT_WITH_MENTIONS = pa.schema(
    [
        ("segment_id", pa.string()),
        ("collection", pa.string()),
        ("doc_id", pa.string()),
        ("text", pa.string()),
        ("speaker", pa.string()),
        ("context_device", pa.string()),
        ("mentions", pa.list_(MENTION)),
    ]
)
"""Input of the relation pipeline: a segment with the NER mentions found in it, and the
most mentioned product of its document (the device a support thread is about)."""

COLLECTIONS = pa.schema(
    [("name", pa.string()), ("inputs", pa.string()), ("registered_at", TIMESTAMP)]
)
"""Registered collections: name and the JSON list of their input paths."""

ENTITIES = pa.schema(
    [
        ("entity_id", pa.string()),
        ("collection", pa.string()),
        ("name", pa.string()),
        ("entity_type", pa.string()),
        ("norm_key", pa.string()),
        ("mention_count", pa.int32()),
    ]
)

ENTITY_ALIASES = pa.schema(
    [
        ("collection", pa.string()),
        ("entity_id", pa.string()),
        ("alias", pa.string()),
        ("mention_count", pa.int32()),
    ]
)

ENTITY_SAME_AS = pa.schema(
    [
        ("collection", pa.string()),
        ("norm_key", pa.string()),
        ("entity_id", pa.string()),
        ("method", pa.string()),
        ("score", pa.float64()),
    ]
)
"""Reversible resolution links: a normalised mention key belongs to an entity, by method."""

MENTION_COUNT = pa.struct([("name", pa.string()), ("mentions", pa.int32())])
"""How often a key was seen with one surface form, or as one type."""

ENTITY_BLOCKING_KEYS = pa.schema(
    [
        ("collection", pa.string()),
        ("norm_key", pa.string()),
        ("config_id", pa.string()),
        ("entity_type", pa.string()),
        ("surfaces", pa.list_(MENTION_COUNT)),
        ("types", pa.list_(MENTION_COUNT)),
        ("tokens", pa.list_(pa.string())),
        ("band_codes", pa.list_(pa.int64())),
    ]
)
"""The persistent blocking index of entity resolution, one row per normalised key: its
stats (surface forms and types with their mention counts, the dominant type), its
Levenshtein blocking tokens and its LSH bucket code per band (empty with the embedding
step off). `config_id` names the thresholds, seed and encoder it was made with; an index
of another configuration is rebuilt whole."""

ENTITY_BLOCKING_EDGES = pa.schema(
    [
        ("collection", pa.string()),
        ("method", pa.string()),
        ("key_a", pa.string()),
        ("key_b", pa.string()),
        ("score", pa.float64()),
    ]
)
"""The candidate edges the blocking index produced: key pairs (key_a < key_b) that passed
the guards and the threshold of a similarity step (`levenshtein`, `embedding`) in a block
within the size limit, with the rounded score; every run replays them."""

ENTITY_CONSTRAINTS = pa.schema(
    [
        ("collection", pa.string()),
        ("kind", pa.string()),
        ("key_a", pa.string()),
        ("key_b", pa.string()),
        ("created_at", TIMESTAMP),
    ]
)
"""A user's `kgmem entities split/merge` decisions, which resolution obeys."""


class FactOperation(StrEnum):
    """What a fact version does to its fact (REAL's non-destructive updates)."""

    INSERT = "insert"
    MERGE_INTERVAL = "merge-interval"
    CLOSE = "close"
    CONFIDENCE_UPGRADE = "confidence-upgrade"
    RETRACT = "retract"


FACT_VERSION_LOG = pa.schema(
    [
        ("version_id", pa.string()),
        ("fact_id", pa.string()),
        ("collection", pa.string()),
        ("head_entity_id", pa.string()),
        ("head_name", pa.string()),
        ("relation", pa.string()),
        ("tail_entity_id", pa.string()),
        ("tail_name", pa.string()),
        ("confidence", pa.float64()),
        ("valid_from", TIMESTAMP),
        ("valid_to", TIMESTAMP),
        ("recorded_from", TIMESTAMP),
        ("operation", pa.string()),  # a FactOperation
        ("supersedes", pa.string()),
        ("source_segment_ids", pa.list_(pa.string())),
        ("extractor", pa.string()),
        ("cardinality", pa.string()),
    ]
)
"""The append-only fact log; the `fact_versions` view adds `recorded_to`."""

FACT_VERSION_COLUMNS = (*FACT_VERSION_LOG.names, "recorded_to")
"""Columns of the `fact_versions` view."""

SEGMENT_NODES = pa.schema(
    [
        ("collection", pa.string()),
        ("segment_id", pa.string()),
        ("node_id", pa.string()),
        ("kind", pa.string()),
    ]
)
"""A segment's structural and phrase nodes, and its next turn (`transforms.graph_nodes`)."""

RELATION_CARDINALITY = pa.schema(
    [
        ("collection", pa.string()),
        ("relation", pa.string()),
        ("cardinality", pa.string()),
        ("source", pa.string()),
        ("evidence", pa.string()),
        ("decided_at", TIMESTAMP),
    ]
)

QUARANTINE_RECORD = pa.schema(
    [
        ("collection", pa.string()),
        ("stage", pa.string()),
        ("source_file", pa.string()),
        ("record_ref", pa.string()),
        ("reason", pa.string()),
        ("raw", pa.string()),
    ]
)
"""`QuarantineRecord.as_row`, as stages hand it over (Parquet from Beam)."""

QUARANTINE = QUARANTINE_RECORD.append(pa.field("quarantined_at", TIMESTAMP))

STAGE_LEDGER = pa.schema(
    [
        ("collection", pa.string()),
        ("stage", pa.string()),
        ("doc_id", pa.string()),
        ("processed_at", TIMESTAMP),
    ]
)

STAGE_STATE = pa.schema(
    [
        ("collection", pa.string()),
        ("stage", pa.string()),
        ("input_fingerprint", pa.string()),
        ("updated_at", TIMESTAMP),
    ]
)

WAREHOUSE_SCHEMA = pa.schema([("ddl_digest", pa.string())])
"""The digest of the DDL last run on a warehouse file (`schemas.warehouse.DDL_DIGEST`)."""

EVALUATION_RESULTS = pa.schema(
    [
        ("collection", pa.string()),
        ("snapshot_id", pa.string()),
        ("benchmark", pa.string()),
        ("strategy", pa.string()),
        ("metric", pa.string()),
        ("value", pa.float64()),
        ("evaluated_at", TIMESTAMP),
    ]
)

SNAPSHOTS = pa.schema(
    [
        ("snapshot_id", pa.string()),
        ("collection", pa.string()),
        ("content_hash", pa.string()),
        ("created_at", TIMESTAMP),
        ("recorded_cutoff", TIMESTAMP),
        ("lance_versions", pa.string()),
        ("source_partitions", pa.string()),
        ("embedding_model", pa.string()),
        ("counts", pa.string()),
        ("retrieval", pa.string()),
    ]
)

LANCE_SEGMENTS = pa.schema(
    [
        ("segment_id", pa.string()),
        ("doc_id", pa.string()),
        ("kind", pa.string()),
        ("text", pa.string()),
        ("char_start", pa.int32()),
        ("char_end", pa.int32()),
        ("speaker", pa.string()),
        ("session_id", pa.string()),
        ("turn_id", pa.string()),
        ("observed_at", TIMESTAMP),
        ("mentioned_from", TIMESTAMP),
        ("mentioned_to", TIMESTAMP),
        ("title", pa.string()),
        ("source_path", pa.string()),
        ("entity_ids", pa.list_(pa.string())),
        ("search_text", pa.string()),
        ("node_ids", pa.list_(pa.string())),
        ("next_segment_id", pa.string()),
    ]
)
"""Retrievable segments in LanceDB (a `vector` column is added when embedding, and a
`vector_fusion` column when a second encoder is on); the `entity_ids` column is the
segment side of the entity–segment graph and `node_ids` of its structural nodes (topics,
document, session, speaker, day; `transforms.graph_nodes`), `next_segment_id` a turn's next
turn; `search_text` is what full text and the
encoders index (`transforms.graph_links.segment_search_text`), while `text` and the char
offsets stay the segment's own span of its document."""

VECTOR = "vector"
"""The main encoder's vector column of every LanceDB table."""
VECTOR_FUSION = "vector_fusion"
"""The second encoder's vector column of the segments table (a hybrid fusion signal)."""
VECTOR_COLUMNS = (VECTOR, VECTOR_FUSION)

LANCE_ENTITIES = pa.schema(
    [
        ("entity_id", pa.string()),
        ("name", pa.string()),
        ("entity_type", pa.string()),
        ("aliases", pa.list_(pa.string())),
        ("description", pa.string()),
    ]
)
"""Entities in LanceDB; `description` (name, type and aliases) is what gets embedded."""

LANCE_ENTITY_CONTEXTS = pa.schema([("entity_id", pa.string()), ("contexts", pa.string())])
"""KGERMAR entity contexts in LanceDB: the marked 64-token windows around an entity's
mentions; the `vector` added when embedding is the span-pooled context embedding."""

LANCE_ENTITY_NAMES = pa.schema([("entity_id", pa.string()), ("name", pa.string())])
"""Entity names in LanceDB, embedded alone (not the description), for the nearest-neighbour
search of synonym links (`transforms.entity_links`); an IVF_PQ index once it is large."""

LANCE_ENTITY_LINKS = pa.schema(
    [
        ("link_id", pa.string()),
        ("head_id", pa.string()),
        ("tail_id", pa.string()),
        ("kind", pa.string()),  # co_occurs | synonym, see transforms.entity_links
        ("weight", pa.float64()),
    ]
)
"""Untyped entity – entity links of the passage graph, one row per unordered pair and kind
(head_id < tail_id): co-occurrence within KGERMAR's window where no typed fact joins the
pair, and synonymy of names. Pinned by the snapshot."""

LANCE_FACTS = pa.schema(
    [
        ("fact_id", pa.string()),
        ("head_entity_id", pa.string()),
        ("head_name", pa.string()),
        ("relation", pa.string()),
        ("tail_entity_id", pa.string()),
        ("tail_name", pa.string()),
        ("statement", pa.string()),
    ]
)
"""Facts in LanceDB, one row per logical fact (all its versions share head, relation and
tail); `statement` ("head relation tail") is what gets embedded. Which versions are valid
when is the warehouse's business: strategies join these vectors to the as-of facts."""

ASSERTIONS = pa.schema(
    [
        ("head_id", pa.string()),
        ("relation", pa.string()),
        ("tail_id", pa.string()),
        ("time", TIMESTAMP),
        ("confidence", pa.float64()),
        ("negated", pa.bool_()),
        ("segment_id", pa.string()),
        ("extractor", pa.string()),
        ("until", TIMESTAMP),
        ("doc_id", pa.string()),
    ]
)
"""Canonical assertions, the input of the per-key fact fold (transforms.facts.Assertion)."""

FACT_INTERVALS = pa.schema(
    [
        ("fact_id", pa.string()),
        ("head_entity_id", pa.string()),
        ("relation", pa.string()),
        ("tail_entity_id", pa.string()),
        ("confidence", pa.float64()),
        ("valid_from", TIMESTAMP),
        ("valid_to", TIMESTAMP),
        ("source_segment_ids", pa.list_(pa.string())),
        ("extractor", pa.string()),
        ("cardinality", pa.string()),
    ]
)
"""Output of the fold: one valid-time interval of a fact (transforms.facts.FactState)."""
