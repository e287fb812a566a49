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

import weakref
from collections.abc import Collection
from dataclasses import dataclass, field

import numpy as np

from memory.csr import row_entries
from memory.passage_links import PassageLinks

MENTIONED_WITH, NEXT_TURN = "mentioned_with", "next_turn"
PER_SEGMENT = 2


@dataclass(frozen=True)
class LinkCandidates:
    """Untyped neighbours of one beam end, a row each: the segment the link leaves by
    (`via`), the segment it reaches (`reached`, equal to `via` for `mentioned_with`), the
    passage node it reaches, and the reached segment's unit vector (`via`, `reached`
    and `targets` as arrays or lists of ints)."""

    via: np.ndarray | list[int]
    reached: np.ndarray | list[int]
    targets: np.ndarray | list[int]
    vectors: np.ndarray

    def __len__(self) -> int:
        return len(self.targets)


def no_candidates(dim: int) -> LinkCandidates:
    """No untyped neighbour (one shared, read-only value per vector dimension)."""
    known = _NO_CANDIDATES.get(dim)
    if known is None:
        empty = np.zeros(0, np.int64)
        empty.flags.writeable = False
        vectors = np.zeros((0, dim), np.float32)
        vectors.flags.writeable = False
        known = _NO_CANDIDATES[dim] = LinkCandidates(empty, empty, empty, vectors)
    return known


_NO_CANDIDATES: dict[int, LinkCandidates] = {}


@dataclass(frozen=True)
class LinkTable:
    """A node's untyped links before a path's exclusions, a function of the passage graph
    alone (for a linkable node; a hub's depends on the query's `focus`): per link row, the
    segment it leaves by and the one it reaches (`via_list`, `reached_list`: the node's
    segments, then their next turns, then their previous ones), and the linkable nodes
    each row reaches (`node_list`, row by row; `row_starts`: where each row's start, then
    the end), in TopM's order per row: bridges first, the fewest segments first, then by
    position. A path's exclusions keep this order, so the first `PER_SEGMENT` of a row
    left are those the path may take. Python tuples, which `link_candidates` walks (a
    table has ~4 rows and ~30 nodes at 100k facts, where each NumPy call of an array form
    cost more than the walk) and the collector stops tracking (a view keeps thousands)."""

    node_list: tuple[int, ...]
    row_starts: tuple[int, ...]
    via_list: tuple[int, ...]
    reached_list: tuple[int, ...]
    chosen: dict[int, tuple[tuple[int, ...], ...]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """Per node whose table this is, each row's first `PER_SEGMENT` nodes other than it
    (`link_candidates`' rows for a path excluding that node alone), found once."""

    @property
    def size(self) -> int:
        """Items it holds (for `space.EntityMemo`)."""
        return len(self.via_list) + len(self.node_list)


def link_table(links: PassageLinks, segments: np.ndarray) -> LinkTable:
    """The `LinkTable` of the links leaving through `segments` (a node's)."""
    return link_tables(links, [segments])[0]


def link_tables(
    links: PassageLinks, segment_lists: list[np.ndarray], owners: list[int] | None = None
) -> list[LinkTable]:
    """`link_table` of each node's `segments` in `segment_lists`, built together: one
    pass of array calls over all their rows (a search's ~40 new nodes a depth at 100k
    facts, where each table alone took ~15 array calls), then the tables cut apart. With
    `owners` (the node of each table), each table's `chosen` rows for its node are found
    in the same pass."""
    sizes = np.array([len(segments) for segments in segment_lists], np.int64)
    segments = (
        np.concatenate([np.asarray(s, np.int64) for s in segment_lists])
        if len(segment_lists)
        else np.zeros(0, np.int64)
    )
    owner = np.repeat(np.arange(len(segment_lists)), sizes)
    following, previous = links.next_segment[segments], links.previous_segment[segments]
    to_next, to_previous = following >= 0, previous >= 0
    # per table: its segments, then their next turns, then their previous ones
    via = np.concatenate([segments, segments[to_next], segments[to_previous]])
    reached = np.concatenate([segments, following[to_next], previous[to_previous]])
    tables = np.concatenate([owner, owner[to_next], owner[to_previous]])
    part = np.repeat([0, 1, 2], [len(segments), int(to_next.sum()), int(to_previous.sum())])
    order = np.lexsort((part, tables))
    via, reached, tables = via[order], reached[order], tables[order]
    nodes, _, counts = row_entries(links.segment_nodes, reached)
    nodes = np.asarray(nodes, np.int64)
    row = np.repeat(np.arange(len(reached)), counts)
    kept = links.linkable[nodes]
    nodes, row = nodes[kept], row[kept]
    count = links.counts[nodes]
    order = np.lexsort((nodes, count, count < 2, row))
    nodes, row = nodes[order], row[order]
    row_bounds = np.searchsorted(tables, np.arange(len(segment_lists) + 1)).tolist()
    starts = np.searchsorted(row, np.arange(len(reached) + 1)).tolist()
    # tuples, which the collector stops tracking (a view keeps thousands of tables)
    node_list, via_list = tuple(nodes.tolist()), tuple(via.tolist())
    reached_list = tuple(reached.tolist())
    chosen: list[tuple[int, ...]] | None = None
    if owners is not None:  # per row, its first PER_SEGMENT nodes other than the owner
        other = nodes != np.asarray(owners, np.int64)[tables[row]]
        counted = np.concatenate([[0], np.cumsum(other)])
        rank = counted[1:] - counted[np.asarray(starts[:-1], np.int64)][row]
        first = np.flatnonzero(other & (rank <= PER_SEGMENT))
        picked: list[list[int]] = [[] for _ in range(len(reached))]
        for at, node in zip(row[first].tolist(), nodes[first].tolist(), strict=True):
            picked[at].append(node)
        chosen = [tuple(p) for p in picked]
    built = []
    for t in range(len(segment_lists)):
        r0, r1 = row_bounds[t], row_bounds[t + 1]
        n0, n1 = starts[r0], starts[r1]
        made = LinkTable(
            node_list[n0:n1],
            tuple([start - n0 for start in starts[r0 : r1 + 1]]),
            via_list[r0:r1],
            reached_list[r0:r1],
        )
        if chosen is not None:
            made.chosen[owners[t]] = tuple(chosen[r0:r1])
        built.append(made)
    return built


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
    on_path: np.ndarray | Collection[int],
    used: np.ndarray | Collection[int],
    query_vector: np.ndarray,
    own: int | None = None,
) -> LinkCandidates:
    """The untyped neighbours of the node whose links `table` holds (see the module):
    `on_path`, the passage nodes of the path; `used`, the segments its hops already passed
    through. The rows leaving by or reaching a used segment and the nodes on the path are
    dropped, then each row keeps its first `PER_SEGMENT` nodes (`link_walk`); a node
    reached through several rows keeps its most similar one (the first of equals;
    `kept_links`). With `own`, the table's node (on the path), see `link_walk`."""
    via, reached, nodes = link_walk(table, on_path, used, own)
    if not nodes:
        return no_candidates(len(query_vector))
    vectors = evidence_vectors(links, via, reached, len(query_vector))
    return kept_links(via, reached, nodes, vectors, query_vector)


def link_walk(
    table: LinkTable,
    on_path: np.ndarray | Collection[int],
    used: np.ndarray | Collection[int],
    own: int | None = None,
) -> tuple[list[int], list[int], list[int]]:
    """`link_candidates`' rows before the vectors: (segment left by, segment reached,
    node reached) of each, walked in Python over the table's tuples. With `own` (the
    table's node, on the path), a row whose first nodes other than `own`
    (`LinkTable.chosen`) are all off the path keeps those without a walk: the nodes before
    them in the row are `own` alone."""
    on = set(on_path.tolist() if isinstance(on_path, np.ndarray) else on_path)
    used = set(used.tolist() if isinstance(used, np.ndarray) else used)
    chosen = None
    if own is not None and own in on:
        chosen = table.chosen.get(own)
        if chosen is None:
            chosen = table.chosen[own] = _chosen(table, own)
    via: list[int] = []
    reached: list[int] = []
    nodes: list[int] = []
    node_list, starts = table.node_list, table.row_starts
    for r, (leaving, reaching) in enumerate(zip(table.via_list, table.reached_list, strict=True)):
        if used and (leaving in used or reaching in used):
            continue
        if chosen is not None:
            first = chosen[r]
            if on.isdisjoint(first):
                for node in first:
                    via.append(leaving)
                    reached.append(reaching)
                    nodes.append(node)
                continue
        taken = 0
        for node in node_list[starts[r] : starts[r + 1]]:
            if node in on:
                continue
            via.append(leaving)
            reached.append(reaching)
            nodes.append(node)
            taken += 1
            if taken == PER_SEGMENT:
                break
    return via, reached, nodes


def kept_links(
    via: list[int],
    reached: list[int],
    nodes: list[int],
    vectors: np.ndarray,
    query_vector: np.ndarray,
) -> LinkCandidates:
    """The walked rows with their vectors (`evidence_vectors` of them), a node reached
    through several rows keeping its most similar one (the first of equals) by the rows'
    product with the query."""
    if len(set(nodes)) == len(nodes):
        return LinkCandidates(via, reached, nodes, vectors)
    values = (vectors @ np.asarray(query_vector, np.float32)).tolist()
    best: dict[int, int] = {}
    for i, node in enumerate(nodes):
        j = best.get(node)
        if j is None or values[i] > values[j]:
            best[node] = i
    keep = sorted(best.values())
    return LinkCandidates(
        [via[i] for i in keep], [reached[i] for i in keep], [nodes[i] for i in keep], vectors[keep]
    )


def _chosen(table: LinkTable, own: int) -> tuple[tuple[int, ...], ...]:
    """Each row's first `PER_SEGMENT` nodes other than `own`."""
    node_list, starts = table.node_list, table.row_starts
    rows = []
    for r in range(len(table.via_list)):
        first = []
        for node in node_list[starts[r] : starts[r + 1]]:
            if node != own:
                first.append(node)
                if len(first) == PER_SEGMENT:
                    break
        rows.append(tuple(first))
    return tuple(rows)


def evidence_vectors(
    links: PassageLinks, via: np.ndarray | list[int], reached: np.ndarray | list[int], dim: int
) -> np.ndarray:
    """Per link, the unit vector of its evidence: the segment for `mentioned_with`, the
    sum of both turns' unit vectors for `next_turn`, normalised (row by row: the rows of
    several paths' links read at once are those read path by path)."""
    vectors = unit_vectors(links, reached, dim)
    turns = [i for i, (a, b) in enumerate(zip(via, reached, strict=True)) if a != b]
    if turns:
        pair = vectors[turns] + unit_vectors(links, [via[i] for i in turns], dim)
        norms = np.linalg.norm(pair, axis=1, keepdims=True)
        vectors[turns] = np.divide(pair, norms, out=np.zeros_like(pair), where=norms > 0)
    return vectors


def unit_vectors(links: PassageLinks, segments: np.ndarray | list[int], dim: int) -> np.ndarray:
    """The segments' vectors normalised, as a new float32 array (zero where the index has
    none, or none of the query's dimension `dim`)."""
    if links.segment_vectors.shape[1] != dim:
        return np.zeros((len(segments), dim), np.float32)
    # indexed as a plain array: a memmap's indexing wraps its result (~4 us a call)
    rows = np.asarray(np.asarray(links.segment_vectors)[segments], np.float32)
    norms = links.segment_norms[segments]
    if _norms_positive(links):  # the division where every norm is, without its mask
        rows /= norms
        return rows
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


_POSITIVE: dict[int, tuple[weakref.ref[np.ndarray], bool]] = {}


def _norms_positive(links: PassageLinks) -> bool:
    """Whether every segment vector of `links` has a positive length (read once per
    `segment_norms` array, kept by its identity while it lives)."""
    norms = links.segment_norms
    known = _POSITIVE.get(id(norms))
    if known is None or known[0]() is not norms:
        key = id(norms)
        known = (weakref.ref(norms, lambda _: _POSITIVE.pop(key, None)), bool((norms > 0).all()))
        _POSITIVE[key] = known
    return known[1]
