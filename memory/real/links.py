"""REAL's untyped neighbours: the passage graph's links as edges a beam may take beside the
typed facts (`memory.passage_links`).

REAL's LLM extracts relations between "users, objects, concepts"; without an LLM the
passage graph's nodes stand in for those entities, and two nodes named by one segment are
joined by a `mentioned_with` relation whose evidence is that segment (an entity and the
topic/title node of a passage that names it: a two-hop bridge), a node of one turn and a
node of the next or previous turn of its session by a `next_turn` relation whose evidence
is both turns. Beam nodes are graph entity positions for entities and `n_entities` +
passage node position for the other nodes (topic, phrase, session, speaker, day).

N(e) for these relations, bounded so a hub never fans out:
- the segments naming the beam's end node (for a hub, `passage_links.HUB_SEGMENTS` or
  more, only those in the flat prior's pool: `SearchSpace.focus`), not yet on the path,
  and for turns their next and previous turns;
- per segment reached, the `PER_SEGMENT` (2) other linkable nodes that lead on furthest
  as bridges: named by at least two segments, the fewest first (a node of one segment
  ends the path), then by position; a node reached through several segments keeps its
  best by similarity.
TopM ranks them with the typed edges by Sim(q, r ⊕ u): for an untyped relation, the
cosine of the query to its evidence, the relation's only text (the segment for
`mentioned_with`; both turns, their unit vectors summed, for `next_turn`, so the turn
after a relevant one ranks by what the two say together).
The three filters: an untyped link holds at every time, and passes every intent (its
label is FACT, which every beam may traverse); its weight (`Hop.confidence`) is no
extraction confidence, so θ_stable does not apply. That weight is the geometric mean of
the two ends' specificities (1 / #segments), so a link between specific nodes is strong.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from memory.csr import row_entries
from memory.passage_links import PassageLinks

MENTIONED_WITH, NEXT_TURN = "mentioned_with", "next_turn"
PER_SEGMENT = 2


@dataclass(frozen=True)
class LinkCandidates:
    """Untyped neighbours of one beam end, a row each: the segment the link leaves by
    (`via`), the segment it reaches (`reached`, equal to `via` for `mentioned_with`), the
    passage node it reaches, and the reached segment's unit vector."""

    via: np.ndarray
    reached: np.ndarray
    targets: np.ndarray
    vectors: np.ndarray

    def __len__(self) -> int:
        return len(self.targets)


def no_candidates(dim: int) -> LinkCandidates:
    empty = np.zeros(0, np.int64)
    return LinkCandidates(empty, empty, empty, np.zeros((0, dim), np.float32))


@dataclass(frozen=True)
class LinkTable:
    """A node's untyped links before a path's exclusions, a function of the passage graph
    alone (for a linkable node; a hub's depends on the query's `focus`): per link row, the
    segment it leaves by and the one it reaches (`via`, `reached`: the node's segments,
    then their next turns, then their previous ones), and the linkable nodes each row
    reaches (`nodes`, with their `row`), in TopM's order per row: bridges first, the
    fewest segments first, then by position. A path's exclusions keep this order, so the
    first `PER_SEGMENT` of a row left are those the path may take."""

    via: np.ndarray
    reached: np.ndarray
    nodes: np.ndarray
    row: np.ndarray

    @property
    def size(self) -> int:
        """Items it holds (for `space.EntityMemo`)."""
        return len(self.via) + len(self.nodes)


def link_table(links: PassageLinks, segments: np.ndarray) -> LinkTable:
    """The `LinkTable` of the links leaving through `segments` (a node's)."""
    following, previous = links.next_segment[segments], links.previous_segment[segments]
    via = np.concatenate([segments, segments[following >= 0], segments[previous >= 0]])
    reached = np.concatenate([segments, following[following >= 0], previous[previous >= 0]])
    nodes, _, counts = row_entries(links.segment_nodes, reached)
    nodes = np.asarray(nodes, np.int64)
    row = np.repeat(np.arange(len(reached)), counts)
    kept = links.linkable[nodes]
    nodes, row = nodes[kept], row[kept]
    count = links.counts[nodes]
    order = np.lexsort((nodes, count, count < 2, row))
    return LinkTable(
        np.asarray(via, np.int64), np.asarray(reached, np.int64), nodes[order], row[order]
    )


def node_segments(links: PassageLinks, node: int, focus: np.ndarray | None) -> np.ndarray:
    """The segments a node's links leave through: its own, or for a hub (not linkable)
    those of its own in `focus` (per segment, whether a hub may leave through it; None:
    none)."""
    segments = links.segments_of(node)
    if not links.linkable[node]:
        segments = segments[focus[segments]] if focus is not None else segments[:0]
    return segments


def link_candidates(
    links: PassageLinks,
    table: LinkTable,
    on_path: np.ndarray,
    used: np.ndarray,
    query_vector: np.ndarray,
) -> LinkCandidates:
    """The untyped neighbours of the node whose links `table` holds (see the module):
    `on_path`, the passage nodes of the path; `used`, the segments its hops already passed
    through. The rows leaving by or reaching a used segment and the nodes on the path are
    dropped, then each row keeps its first `PER_SEGMENT` nodes."""
    dim = len(query_vector)
    fresh = _outside(table.via, used) & _outside(table.reached, used)
    kept = fresh[table.row] & _outside(table.nodes, on_path)
    nodes, row = table.nodes[kept], table.row[kept]
    if not len(nodes):
        return no_candidates(dim)
    start = np.searchsorted(row, row, "left")
    first = np.arange(len(row)) - start < PER_SEGMENT
    nodes, row = nodes[first], row[first]
    via, reached = table.via[row], table.reached[row]
    vectors, similarity = link_vectors(links, via, reached, query_vector)
    # a node reached through several segments keeps its most similar (then first) one
    best = np.lexsort((np.arange(len(nodes)), -similarity, nodes))
    keep = best[np.r_[True, nodes[best][1:] != nodes[best][:-1]]]
    keep.sort()
    return LinkCandidates(via[keep], reached[keep], nodes[keep], vectors[keep])


def link_vectors(
    links: PassageLinks, via: np.ndarray, reached: np.ndarray, query_vector: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per link, the unit vector of its evidence (the segment for `mentioned_with`, the
    sum of both turns' unit vectors for `next_turn`) and its product with the query."""
    vectors, similarity = unit_rows(links, reached, query_vector)
    turns = np.flatnonzero(via != reached)
    if len(turns):
        pair = vectors[turns] + unit_rows(links, via[turns], query_vector)[0]
        norms = np.linalg.norm(pair, axis=1, keepdims=True)
        vectors[turns] = np.divide(pair, norms, out=np.zeros_like(pair), where=norms > 0)
        similarity = vectors @ np.asarray(query_vector, np.float32)
    return vectors, similarity


def _outside(values: np.ndarray, excluded: np.ndarray) -> np.ndarray:
    """Per value, whether it is not in `excluded` (a path's few nodes or segments): one
    comparison per excluded value, without `np.isin`'s sort (~90 calls a query)."""
    kept = np.ones(len(values), bool)
    for value in excluded.tolist():
        kept &= values != value
    return kept


def unit_rows(
    links: PassageLinks, segments: np.ndarray, query_vector: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The segments' vectors normalised (float32; zero where the index has none) and their
    products with the query vector, computed as TopM computes them (zero vectors where
    the index keeps no segment vectors of the query's dimension)."""
    dim = len(query_vector)
    if links.segment_vectors.shape[1] != dim:
        rows = np.zeros((len(segments), dim), np.float32)
    else:
        # indexed as a plain array: a memmap's indexing wraps its result (~4 us a call)
        rows = np.asarray(np.asarray(links.segment_vectors)[segments], np.float32)
        norms = links.segment_norms[segments]
        rows = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    return rows, rows @ np.asarray(query_vector, np.float32)
