"""Document topics and conversation structure as graph nodes."""

from datetime import UTC, datetime

from transforms.graph_nodes import next_turns, segment_nodes, topic_keys

DOCUMENTS = [
    {"doc_id": "d1", "kind": "document", "title": "Society for Psychotherapy Integration"},
    {"doc_id": "d2", "kind": "document", "title": "Journal of Psychotherapy Integration"},
    {"doc_id": "d3", "kind": "document", "title": "The"},
    {"doc_id": "c1", "kind": "conversation", "title": "conv-26"},
]


def test_titled_documents_are_topics_and_their_names_elsewhere_link_to_them():
    titles = topic_keys(DOCUMENTS)
    assert set(titles) == {
        "society for psychotherapy integration",
        "journal of psychotherapy integration",
    }
    segments = [
        {
            "segment_id": "s2",
            "doc_id": "d2",
            "kind": "chunk",
            "text": "Journal of Psychotherapy Integration\nIt is published by the Society "
            "for Psychotherapy Integration.",
        }
    ]
    links = {(r["node_id"], r["kind"]) for r in segment_nodes(segments, titles, {})}
    assert ("topic:journal of psychotherapy integration", "topic") in links
    assert ("topic:society for psychotherapy integration", "topic") in links, "the bridge"
    assert ("document:d2", "document") in links
    entity = {"society for psychotherapy integration": "e42"}
    assert ("e42", "topic") in {
        (r["node_id"], r["kind"]) for r in segment_nodes(segments, titles, entity)
    }, "a topic named like an entity is that entity"


def test_turns_link_to_session_speaker_and_day_and_to_the_next_turn():
    day = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    turns = [
        {
            "segment_id": f"t{i}",
            "doc_id": "c1",
            "kind": "turn",
            "text": "hi",
            "speaker": s,
            "session_id": "S1",
            "observed_at": day,
            "char_start": 10 * i,
        }
        for i, s in enumerate(["Caroline", "Melanie", "Caroline"])
    ]
    turns.append({**turns[0], "segment_id": "u0", "session_id": "S2", "char_start": 100})
    links = {(r["segment_id"], r["node_id"]) for r in segment_nodes(turns, {}, {})}
    assert {
        ("t0", "session:c1/S1"),
        ("t0", "speaker:c1/Caroline"),
        ("t0", "day:2023-05-08"),
    } <= links
    assert ("u0", "session:c1/S2") in links
    assert next_turns(reversed(turns)) == {"t0": "t1", "t1": "t2"}


def test_a_turn_links_to_the_days_it_names_resolved_against_its_own_date():
    said = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    turn = {
        "segment_id": "t0",
        "doc_id": "c1",
        "kind": "turn",
        "text": "I went to a pride parade yesterday, and a talk last week.",
        "speaker": "Caroline",
        "session_id": "S1",
        "observed_at": said,
        "char_start": 0,
    }
    links = {(r["node_id"], r["kind"]) for r in segment_nodes([turn], {}, {})}
    assert {
        ("day:2023-05-07", "relative_date"),
        ("week:2023-W18", "relative_date"),
        ("day:2023-05-08", "day"),
    } <= links
