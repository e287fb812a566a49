"""The passage graph of a snapshot: retrievable segments and the nodes they link to, as one
sparse matrix, for random walks that start from the flat ranking.

Nodes: every segment (chunk or turn), every entity a segment mentions (`entity_ids`), and
every structural node of `transforms.graph_nodes` (`node_ids`: document topics, document,
session, speaker, day) and phrase node of `transforms.phrases`. Edges, all undirected:

- segment – node, weighted by the node's specificity, HippoRAG's inverse of the number of
  segments linked to it (a node shared by two passages is a strong bridge, a hub shared
  by a thousand is a weak one), times `PHRASE_WEIGHT` for phrase nodes;
- entity – entity for every fact valid at the query's coordinates, weighted by the fact's
  confidence times the lesser specificity of its two ends;
- entity – entity for every untyped link of the snapshot's `links` table
  (`transforms.entity_links`: co-occurrence at weight 0.1, synonyms at their cosine), times
  its kind's `ENTITY_LINK_WEIGHTS` factor and the lesser specificity of its two ends;
- turn – next turn of the same session (`next_segment_id`), weight `NEXT_TURN_WEIGHT`.

The segment – node incidence and the next turns come precomputed from the snapshot's
graph index (`transforms.graph_index`); the matrix and its row-normalised transition are
assembled from them once per view (per fact coordinates) with vectorised operations and
cached.

A walk (`PassageGraph.top_segments`) is local by default: a vectorised forward push
(Andersen, Chung & Lang 2006) that touches only the part of the graph the reset mass
reaches, instead of power iteration over every node (`PassageGraph.walk`, the exact path,
threshold 0). See `PassageGraph.push` for the error bound and `WALK_THRESHOLD` for the
default threshold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow.compute as pc
import scipy.sparse as sp

from memory.csr import add_rows
from memory.graph import graph_of
from memory.snapshot_view import QueryContext, SnapshotView
from memory.top import top_positions

PHRASE_WEIGHT = 0.3
"""Factor on the links of phrase nodes (`transforms.phrases`), against 1 for entities and
structural nodes (option `phrase_weight`). Chosen on the dev sets (hipporag_ppr): without
phrase nodes MuSiQue R@5 76.2 and LoCoMo turn/session R@10 77.9/88.5; with them at 1.0,
MuSiQue 75.3; at 0.3, MuSiQue 75.8 and LoCoMo 78.4/88.9; at 0.1, MuSiQue 75.8. Phrases
are a small net change either way on these sets: common nouns bridge conversation turns
("support group") more than encyclopedia passages, whose bridges are titles and names."""
PHRASE_PREFIX = "phrase:"
ENTITY_LINK_WEIGHTS = {"co_occurs": 0.0, "synonym": 0.0}
"""Factor on untyped entity links by kind (options `co_occurs_weight`, `synonym_weight`;
0 leaves a kind out). Off by default, as measured on the dev sets (hipporag_ppr, MuSiQue
R@5 / LoCoMo turn R@10, without links 75.8 / 78.3): co-occurrence at factor 1 costs MuSiQue
1.7 points (74.1), at 0.3 0.7 (75.1), at 0.1 nothing; synonyms at 1 cost 1.0 (74.8), at
0.3 0.5 (75.3); both at 1, 2.1 (73.7). LoCoMo is unchanged by either (100 co-occurrence
and 5 synonym links over 164 entities). A direct entity – entity edge lets the walk skip
the passage that joins the two, and MiniLM names at cosine 0.8 pair "Lester Holt" with
"Carlos Holt" as readily as "LGBTQ" with "LGBT"; the links stay in the snapshot for the
strategies and weights that gain from them."""
NEXT_TURN_WEIGHT = 1.0
"""Weight of a turn – next-turn edge, against a specificity of at most 1 for node links."""
ITERATIONS = 30
TOLERANCE = 1e-9
WALK_THRESHOLD = 2e-6
"""Push threshold of the local walk (option `walk_threshold`), relative to the reset mass
and per unit of weighted degree: a node's PageRank mass is then at most `damping` x
`WALK_THRESHOLD` x its weighted degree below the exact walk's (`PassageGraph.push`); 0
runs the exact power iteration over the whole graph. Weighted degrees are at most ~4.5 on
the bench graphs (a node spreads a specificity of 1 / its segments over them), against
~2e-5 to 1e-4 for the 200th segment by mass. Measured on the synthetic bench workspaces
(hipporag_ppr, top 50 segments, exact walk against push): at 1e-6 identical lists for
30/30 queries at 100k facts and 17/20 at 1M (999 of 1000 segments in common, the others
swap in the tail); at 1e-7, 20/20 at 1M; at 1e-5, 14/30 and 10/20. A walk at 1e-6 costs
~7 ms at 100k and ~12 ms at 1M (CPU time) against ~30 ms and ~500 ms for the 30 products
of the exact walk; at 1e-7, ~25 ms and ~30 ms, so 1e-6 for its cost at 1M.
Stop 26, with the push in scipy's loops (`memory.csr.add_rows`): 2e-6, for the p50 bound
of 1.5x dense at 1M facts; the push costs ~3.3 against ~5.6 ms at 1e-6 there (CPU time,
loaded machine). Top 50 against the exact walk, 2e-6 (1e-6): identical for 24/30 (29/30)
queries at 100k and 15/21 (17/21) at 1M, every top 10 identical, 1499/1500 and 1050/1050
segments in common; the dev sets score alike (hipporag_ppr, MuSiQue R@2/R@5/MRR
57.5/75.8/90.1 at both; LoCoMo turn R@3/R@5/R@10 55.7/67.2/78.3, session
R@10 89.1 at both)."""
ROUND_SPREAD = 0.01
"""A push round moves the residuals within this factor of the round's largest (per unit
of degree); see `PassageGraph.push`."""


@dataclass(frozen=True)
class PassageGraph:
    """Segments, nodes and the transition matrix over [segments | nodes]."""

    segment_ids: list[str]
    node_ids: list[str]
    segment_position: dict[str, int]
    node_position: dict[str, int]
    specificity: np.ndarray
    """Per node: 1 / number of segments linked to it."""
    transition: sp.csr_matrix
    """Column-stochastic where a node has edges: `transition @ x` spreads mass x. The
    adjacency is symmetric, so row u lists u's neighbours v (with A[u, v] / degree[v]):
    the local walk reads a node's out-edges from its row, no transposed copy is kept."""
    degree: np.ndarray
    """Per node of [segments | nodes]: its weighted degree (the adjacency's column sum)."""

    @property
    def n_segments(self) -> int:
        return len(self.segment_ids)

    def walk(self, reset: np.ndarray, damping: float) -> np.ndarray:
        """Personalised PageRank r = (1 - d) p + d T r from the reset vector `reset`
        (any non-negative vector over [segments | nodes]); mass that reaches a node
        without edges returns to p. Returns r, summing to 1."""
        p = reset / reset.sum()
        rank = p.copy()
        for _ in range(ITERATIONS):
            spread = self.transition @ rank
            updated = (1 - damping) * p + damping * (spread + (rank.sum() - spread.sum()) * p)
            if np.abs(updated - rank).sum() < TOLERANCE:
                return updated
            rank = updated
        return rank

    def push(
        self, seeds: np.ndarray, weights: np.ndarray, damping: float, threshold: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Local personalised PageRank by vectorised forward push (Andersen, Chung & Lang
        2006) from the reset vector with `weights` (> 0) on nodes `seeds`: the nodes it
        pushed (each once, in no particular order) and their estimate of ppr(p).

        ppr(q) = (1 - d)(I - dT)^-1 q, d = `damping`, p the normalised reset; `walk`
        returns ppr(p) / sum(ppr(p)) (what it sends back from nodes without edges to p
        only rescales it), so both rank alike. Starting from residual r = p and x = 0,
        pushing node u moves (1 - d) r(u) into x(u) and d r(u) A[u, v] / degree(u) into
        each neighbour's r(v) (a node without edges keeps (1 - d) r(u) and loses the
        rest). With the symmetric adjacency A, x + ppr(r) = ppr(p) after every push, and
        ppr(degree) = degree; pushes go on until r(v) <= `threshold` x degree(v)
        everywhere. The estimate returned is x + (1 - d) r, the first term of ppr(r)
        added, so that 0 <= ppr(p)(v) - estimate(v) <= d x threshold x degree(v) on the
        nodes returned, and ppr(p)(v) <= threshold x degree(v) on the others.

        Vectorised: the residual is kept per unit of degree, rho = r / degree, so a push
        adds d x rho(u) x T[u, v] to rho(v) (T[u, v] = A[u, v] / degree(v), read from
        u's row of the symmetric transition) and the threshold test is rho(v) >
        `threshold`, with no degree lookup per edge. Each round pushes, of the nodes above
        the threshold, those within `ROUND_SPREAD` of the largest rho, so that a node
        gathers its neighbours' pushes before it spreads them (about half the edge reads
        of pushing every node above the threshold, measured at 1M facts).

        Cost: the edges of the pushed nodes (a few hundred thousand at 1M facts and the
        default threshold, against 30 products over five million edges), no step over
        all nodes but the allocation of two work vectors (zero pages until written)."""
        if threshold <= 0:
            raise ValueError(f"the push threshold must be positive, got {threshold}")
        degree, transition = self.degree, self.transition
        seeds = np.asarray(seeds, np.int64)
        reset = np.asarray(weights, np.float64) / np.sum(weights)
        rho = np.zeros(len(degree))
        scratch = np.empty(len(degree), np.int64)  # for `_distinct`: written before read
        linked = degree[seeds] > 0
        np.add.at(rho, seeds[linked], reset[linked] / degree[seeds[linked]])
        pending = _distinct(seeds[linked], scratch)
        pending = pending[rho[pending] > threshold]
        pushed, pushed_levels = [seeds[linked][:0]], [reset[:0]]
        while len(pending):
            levels = rho[pending]
            now = levels >= levels.max() * ROUND_SPREAD
            active, waiting, levels = pending[now], pending[~now], levels[now]
            pushed.append(active)
            pushed_levels.append(levels)
            rho[active] = 0.0
            targets = add_rows(transition, active, damping * levels, rho)
            above = targets[rho[targets] > threshold]
            pending = _distinct(np.concatenate([waiting, above]), scratch)
        # x, over the nodes returned only: each push's (1 - d) r(u) added at the end, in
        # the order of the pushes (seeds without edges keep (1 - d) of their reset)
        unlinked = seeds[~linked]
        active, levels = np.concatenate(pushed), np.concatenate(pushed_levels)
        nodes = _distinct(np.concatenate([unlinked, active]), scratch)
        scratch[nodes] = np.arange(len(nodes))
        estimate = np.zeros(len(nodes))
        np.add.at(estimate, scratch[unlinked], (1.0 - damping) * reset[~linked])
        np.add.at(estimate, scratch[active], (1.0 - damping) * levels * degree[active])
        return nodes, estimate + (1.0 - damping) * rho[nodes] * degree[nodes]

    def top_segments(
        self,
        seeds: np.ndarray,
        weights: np.ndarray,
        damping: float,
        count: int,
        threshold: float = WALK_THRESHOLD,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The `count` segments of most walk mass from the reset vector with `weights`
        (> 0) on the positions `seeds` (ascending, over [segments | nodes]), best first
        (ties by position), and their masses (normalised over all nodes, as `walk`
        returns them): the local push above `threshold`, the exact power iteration at 0.
        Segments the push never reached have mass 0 and fill the list in position order
        where fewer than `count` were reached.

        The reset comes as its non-zero entries, not as a vector over the whole graph: at
        1M facts a vector of 815k nodes to fill and scan for its few hundred seeds cost
        ~3 ms a query, and so did the scan of every segment for the unreached ones."""
        if threshold <= 0:
            reset = np.zeros(len(self.degree))
            reset[seeds] = weights
            mass = self.walk(reset, damping)[: self.n_segments]
            reached = np.flatnonzero(mass)
            mass = mass[reached]
        else:
            nodes, estimate = self.push(seeds, weights, damping, threshold)
            # sum(ppr(p)): all but what nodes without edges lose, as `walk` normalises
            lost = damping * weights[self.degree[seeds] == 0].sum() / weights.sum()
            segments = nodes < self.n_segments
            order = np.argsort(nodes[segments])
            reached = nodes[segments][order]
            mass = estimate[segments][order] / (1.0 - lost)
        top = top_positions(mass, count)
        chosen, masses = reached[top], mass[top]
        missing = min(count, self.n_segments) - len(chosen)
        if missing > 0:  # then every reached segment is chosen
            chosen = np.concatenate([chosen, _first_absent(reached, missing)])
            masses = np.concatenate([masses, np.zeros(len(chosen) - len(masses))])
        return chosen, masses


def _first_absent(present: np.ndarray, count: int) -> np.ndarray:
    """The `count` smallest non-negative positions not in `present` (distinct positions):
    they lie below len(present) + count, so only that prefix is scanned."""
    span = len(present) + count
    absent = np.ones(span, bool)
    absent[present[present < span]] = False
    return np.flatnonzero(absent)[:count]


def _distinct(positions: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """`positions` without repeats (in no particular order), in time linear in their
    number: each position keeps the one occurrence whose index `scratch` holds after
    writing every occurrence's index there (`scratch` spans every position; no sort)."""
    order = np.arange(len(positions))
    scratch[positions] = order
    return positions[scratch[positions] == order]


def passage_graph(view: SnapshotView, query: QueryContext) -> PassageGraph:
    """The passage graph for the query's fact coordinates, built once per view."""
    phrase_weight = float(query.options.get("phrase_weight", PHRASE_WEIGHT))
    link_weights = {
        kind: float(query.options.get(f"{kind}_weight", weight))
        for kind, weight in ENTITY_LINK_WEIGHTS.items()
    }
    key = ("passage_graph", phrase_weight, *link_weights.values(), *query.fact_filter)
    if key not in view.cache:
        view.cache[key] = _build(view, query, phrase_weight, link_weights)
    return view.cache[key]


def _build(
    view: SnapshotView, query: QueryContext, phrase_weight: float, link_weights: dict[str, float]
) -> PassageGraph:
    """The passage graph from the snapshot's graph index: its segment – node incidence and
    next turns are precomputed, the fact edges are the query's selection; no per-segment
    or per-fact Python loop."""
    index = view.graph_index
    links = index.segment_nodes
    specificity = 1.0 / np.maximum(np.asarray(links.sum(axis=0)).ravel(), 1.0)
    is_phrase = pc.starts_with(index.node_ids, PHRASE_PREFIX).to_numpy(zero_copy_only=False)
    kind_weight = np.where(is_phrase, phrase_weight, 1.0)
    weighted = (links @ sp.diags(specificity * kind_weight)).tocsr()
    entity_edges = _facts(view, query, specificity) + _entity_links(view, specificity, link_weights)
    adjacency = sp.bmat(
        [[_next_turns(index.next_segment), weighted], [weighted.T, entity_edges]], format="csr"
    )
    transition, degree = transition_of(adjacency)
    names = view.node_names
    return PassageGraph(
        segment_ids=names.segment_ids,
        node_ids=names.passage_nodes,
        segment_position=view.segment_index,
        node_position=names.passage_position,
        specificity=specificity,
        transition=transition,
        degree=degree,
    )


def transition_of(adjacency: sp.spmatrix) -> tuple[sp.csr_matrix, np.ndarray]:
    """The walk's transition T = A D^-1 of a symmetric weighted adjacency A (a column of a
    node without edges stays 0) and the weighted degrees D (column sums).

    T's index arrays are int64 (scipy picks int32 where they fit): the push's node
    positions are then numpy's own index type, which its fancy indexing takes as they
    are, where int32 positions are converted on every gather and scatter (~30-50% slower
    at a push round's sizes; 4.5 against 4.3 ms a push at 1M facts, for 20 MB more)."""
    degree = np.asarray(adjacency.sum(axis=0)).ravel()
    inverse = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
    transition = (adjacency @ sp.diags(inverse)).tocsr()
    transition.indptr = transition.indptr.astype(np.int64)
    transition.indices = transition.indices.astype(np.int64)
    return transition, degree


def _next_turns(following: np.ndarray) -> sp.csr_matrix:
    """Turn – next-turn edges, both directions."""
    turns = np.flatnonzero(following >= 0)
    weights = np.full(len(turns), NEXT_TURN_WEIGHT)
    return _symmetric(turns, np.asarray(following[turns], np.int64), weights, len(following))


def _entity_links(
    view: SnapshotView, specificity: np.ndarray, kind_weights: dict[str, float]
) -> sp.csr_matrix:
    """Entity – entity edges of the snapshot's untyped links (none where it pins no
    `links` table, a snapshot built before they existed)."""
    n = len(specificity)
    walked = {kind: weight for kind, weight in kind_weights.items() if weight > 0}
    if not walked or "links" not in view.snapshot.lance_versions:
        return sp.csr_matrix((n, n))  # nothing to walk: the table is not read
    links = view.table("links").to_arrow()
    nodes = view.graph_index.node_ids
    a = np.asarray(pc.index_in(links.column("head_id"), nodes).fill_null(-1).to_numpy(), np.int64)
    b = np.asarray(pc.index_in(links.column("tail_id"), nodes).fill_null(-1).to_numpy(), np.int64)
    factor = np.zeros(links.num_rows)
    for kind, weight in walked.items():
        factor[pc.equal(links.column("kind"), kind).to_numpy()] = weight
    kept = (a >= 0) & (b >= 0) & (factor > 0)
    a, b = a[kept], b[kept]
    weight = np.asarray(links.column("weight").to_numpy(), np.float64)[kept] * factor[kept]
    return _symmetric(a, b, weight * np.minimum(specificity[a], specificity[b]), n)


def _symmetric(a: np.ndarray, b: np.ndarray, weights: np.ndarray, n: int) -> sp.csr_matrix:
    """The n x n matrix of undirected edges a[i] – b[i] of `weights`, both directions set."""
    return sp.csr_matrix((np.r_[weights, weights], (np.r_[a, b], np.r_[b, a])), shape=(n, n))


def _facts(view: SnapshotView, query: QueryContext, specificity: np.ndarray) -> sp.csr_matrix:
    """Entity – entity edges of the query's facts between entities the segments mention,
    weighted by confidence times the lesser specificity of the two ends."""
    graph = graph_of(view, query)
    entity_node = view.graph_index.entity_node
    a, b = entity_node[graph.fact_head], entity_node[graph.fact_tail]
    kept = (a >= 0) & (b >= 0) & (a != b)
    a, b = a[kept], b[kept]
    weights = graph.fact_confidence[kept] * np.minimum(specificity[a], specificity[b])
    n = len(specificity)
    upper = sp.csr_matrix((weights, (a, b)), shape=(n, n))
    return (upper + upper.T).tocsr()
