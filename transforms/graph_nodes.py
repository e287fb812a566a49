"""The LLM-free structure of the memory graph beside named entities: document topics and
conversation structure, as typed nodes that segments link to, and the turn that follows
each turn.

Node ids are typed strings, so that they never collide with entity ids (hex):

- `topic:<key>`: a titled document (an encyclopedia article, a report) is about its title.
  Every segment of the document links to its topic, and so does every segment elsewhere
  whose text names the title (any normalised n-gram of up to `MAX_TITLE_WORDS` words equal
  to the normalised title). This is the bridge of a two-hop question: the passage that
  mentions "Society for the Exploration of Psychotherapy Integration" reaches the article
  of that title. When an entity's normalised name equals the title, the entity is the
  topic (its id is used), so a title and a named entity are one node. Titles made of stop
  words alone, or shorter than `MIN_TITLE_CHARS`, are no topics.
- `document:<doc_id>`: the chunks of one document (its chunk → document edge).
- `session:<doc_id>/<session_id>`: MemORAI's provenance graph, turn → session; the
  session's conversation is implied by the doc id in the key.
- `speaker:<doc_id>/<name>`: who said a turn, per conversation.
- `day:<YYYY-MM-DD>`: the day a turn was observed (its session date), shared across
  conversations, so that turns of one day are two hops apart.
- relative dates a turn names ("yesterday", "last week"), resolved against its date into
  `day:`, `week:` and `month:` nodes (`transforms.relative_dates`), link kind
  `relative_date`.

Adjacent turns: each turn's next turn in the same session (`next_segment_id`), an edge
of the conversation's own order: the answer to a question is often the turn after it.

Where the papers are silent, chosen here: the weights of these links are decided at query
time (each node is weighted by its specificity, HippoRAG's inverse passage count), so this
stage only records which links exist.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from transforms.consolidation import normalize_name
from transforms.relative_dates import relative_date_nodes

MAX_TITLE_WORDS = 8
MIN_TITLE_CHARS = 3
KINDS = ("topic", "document", "session", "speaker", "day", "relative_date")
RULES_VERSION = "2"
"""Changes when the link rules change (2: relative dates), so that a stage whose inputs
are unchanged still recomputes its links."""
NEXT_TURN = "next_turn"
"""The link kind of a turn to its next turn (whose segment id is the link's node id)."""
_WORD = re.compile(r"[\w'’-]+")
_STOP_TITLES = frozenset(
    "a an the of in on and or to is was he she it they this that i you we me my your".split()  # noqa: SIM905
)


def topic_keys(documents: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Normalised title -> doc id, for documents (not conversations) with a usable title."""
    keys: dict[str, str] = {}
    for document in documents:
        if document["kind"] == "conversation":
            continue
        key = normalize_name(str(document.get("title") or ""))
        words = key.split()
        if len(key) < MIN_TITLE_CHARS or len(words) > MAX_TITLE_WORDS:
            continue
        if all(word in _STOP_TITLES for word in words):
            continue
        keys.setdefault(key, document["doc_id"])
    return keys


def first_words(titles: Iterable[str]) -> frozenset[str]:
    """The first word of each normalised title: where a title's mention can start."""
    return frozenset(key.split()[0] for key in titles)


def named_titles(text: str, titles: Mapping[str, str], starts: frozenset[str]) -> set[str]:
    """The titles (normalised keys) that `text` names as a whole n-gram; only n-grams that
    begin with a word in `starts` (`first_words(titles)`) are tried."""
    words = _WORD.findall(text)
    found: set[str] = set()
    for start, word in enumerate(words):
        if normalize_name(word).partition(" ")[0] not in starts:
            continue
        for size in range(1, min(MAX_TITLE_WORDS, len(words) - start) + 1):
            key = normalize_name(" ".join(words[start : start + size]))
            if key in titles:
                found.add(key)
    return found


def topic_node(key: str, entity_of: Mapping[str, str]) -> str:
    """The node of a topic: the entity of that name, else `topic:<key>`."""
    return entity_of.get(key) or f"topic:{key}"


def segment_nodes(
    segments: Iterable[Mapping[str, Any]],
    titles: Mapping[str, str],
    entity_of: Mapping[str, str],
) -> Iterator[dict[str, str]]:
    """Rows (segment_id, node_id, kind) of every structural link of `segments` (rows with
    segment_id, doc_id, kind, text, speaker, session_id, observed_at)."""
    topic_of_doc = {doc_id: key for key, doc_id in titles.items()}
    starts = first_words(titles)
    for segment in segments:
        sid, doc_id = segment["segment_id"], segment["doc_id"]
        links: dict[str, str] = {}
        if segment["kind"] == "chunk":
            links[f"document:{doc_id}"] = "document"
            own = topic_of_doc.get(doc_id)
            named = named_titles(str(segment["text"]), titles, starts)
            for key in named | ({own} if own else set()):
                links[topic_node(key, entity_of)] = "topic"
        elif segment["kind"] == "turn":
            links[f"session:{doc_id}/{segment['session_id']}"] = "session"
            if segment.get("speaker"):
                links[f"speaker:{doc_id}/{segment['speaker']}"] = "speaker"
            if segment.get("observed_at") is not None:
                said = segment["observed_at"].date()
                for node in relative_date_nodes(str(segment["text"]), said):
                    links[node] = "relative_date"
                links[f"day:{said.isoformat()}"] = "day"
        for node, kind in sorted(links.items()):
            yield {"segment_id": sid, "node_id": node, "kind": kind}


def next_turns(segments: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Turn segment id -> the id of the next turn of the same session (by offset)."""
    sessions: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for segment in segments:
        if segment["kind"] == "turn":
            key = (segment["doc_id"], str(segment["session_id"]))
            sessions.setdefault(key, []).append((segment["char_start"], segment["segment_id"]))
    following: dict[str, str] = {}
    for turns in sessions.values():
        ordered = [sid for _, sid in sorted(turns)]
        following.update(itertools.pairwise(ordered))
    return following
