"""Weights of the `hybrid` strategy's signals per corpus kind: the packaged defaults, the
workspace file that `kgmem train hybrid-weights` writes, and which weights a query uses.

Signals: `bm25` (full text), `dense` (the main encoder), `dense_fusion` (the second
encoder, where the snapshot has its vectors). Corpus kinds: `documents` (chunks of
documents: encyclopedic passages, reports) and `conversations` (turns). A fixed fusion
helps conversations and hurts encyclopedic passages (../shared/STACK_NOTES.md §3b), so
each kind has its own weights, and a segment is scored with the weights of its kind.

Defaults: fitted on the shared dev sets with `kgmem train hybrid-weights` (simplex grid,
step 0.1, maximising recall@5 of MuSiQue passages for documents and recall@10 of LoCoMo
turns for conversations; see `memory.hybrid_fit`). Without the second encoder,
`dense_fusion` is dropped and the other two weights are renormalised: the dev sets'
two-signal optima (documents bm25 0.3 / dense 0.7, conversations 0.6 / 0.4) are within
0.5 points of the renormalised defaults.

Which weights a query uses: the query's `hybrid_weights` option, else the weights pinned
in its snapshot (the workspace's fitted file, or the defaults, when the snapshot was
recorded), else the defaults.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SIGNALS = ("bm25", "dense", "dense_fusion")
CORPUS_KINDS = {"chunk": "documents", "turn": "conversations"}
"""Segment kind -> corpus kind whose weights score it."""
DEFAULT_WEIGHTS: dict[str, dict[str, float]] = {
    "documents": {"bm25": 0.1, "dense": 0.6, "dense_fusion": 0.3},
    "conversations": {"bm25": 0.5, "dense": 0.3, "dense_fusion": 0.2},
}
DEFAULT_SOURCE = "default (fitted on the shared MuSiQue and LoCoMo dev sets)"
WEIGHTS_FILE = Path("models") / "hybrid_weights.json"

Weights = dict[str, dict[str, float]]
"""Corpus kind -> signal -> weight."""


def parse_weights(value: Mapping[str, Mapping[str, float]]) -> Weights:
    """Weights per corpus kind, each non-negative with a positive sum, normalised to 1;
    kinds not given keep their defaults."""
    parsed = {kind: dict(weights) for kind, weights in DEFAULT_WEIGHTS.items()}
    for kind, weights in value.items():
        if kind not in DEFAULT_WEIGHTS:
            raise ValueError(f"unknown corpus kind {kind!r}; use {sorted(DEFAULT_WEIGHTS)}")
        parsed[kind] = normalised(weights)
    return parsed


def normalised(
    weights: Mapping[str, float], signals: tuple[str, ...] = SIGNALS
) -> dict[str, float]:
    """`weights` restricted to `signals` (missing ones 0), scaled to sum 1."""
    unknown = set(weights) - set(SIGNALS)
    if unknown:
        raise ValueError(f"unknown hybrid signals {sorted(unknown)}; use {SIGNALS}")
    kept = {s: float(weights.get(s, 0.0)) for s in signals}
    if min(kept.values(), default=0.0) < 0 or sum(kept.values()) <= 0:
        raise ValueError(f"hybrid weights need non-negative values with a positive sum: {kept}")
    total = sum(kept.values())
    return {s: w / total for s, w in kept.items()}


def weights_path(home: str | Path) -> Path:
    return Path(home) / WEIGHTS_FILE


def read_fitted(home: str | Path) -> dict[str, Any]:
    """The workspace's fitted records by corpus kind (empty when none was fitted)."""
    path = weights_path(home)
    return json.loads(path.read_text()) if path.exists() else {}


def write_fitted(home: str | Path, kind: str, record: Mapping[str, Any]) -> Path:
    """Store `record` (with its "weights") as the fitted weights of corpus `kind`."""
    if kind not in DEFAULT_WEIGHTS:
        raise ValueError(f"unknown corpus kind {kind!r}; use {sorted(DEFAULT_WEIGHTS)}")
    path = weights_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    records = read_fitted(home)
    records[kind] = dict(record)
    path.write_text(json.dumps(records, indent=2, sort_keys=True))
    return path


def pinned_weights(home: str | Path) -> dict[str, Any]:
    """What a new snapshot pins: per corpus kind the fitted weights of the workspace (with
    where they came from), else the defaults."""
    fitted = read_fitted(home)
    weights = parse_weights({k: r["weights"] for k, r in fitted.items()})
    sources = {
        kind: (
            f"fitted on {fitted[kind].get('benchmark', '?')} "
            f"({fitted[kind].get('snapshot_id', '?')}, {weights_path(home)})"
            if kind in fitted
            else DEFAULT_SOURCE
        )
        for kind in DEFAULT_WEIGHTS
    }
    return {"hybrid_weights": weights, "hybrid_weights_source": sources}


def resolve_weights(
    retrieval: Mapping[str, Any], options: Mapping[str, Any]
) -> tuple[Weights, dict[str, str]]:
    """The weights a query uses per corpus kind and where each came from."""
    if options.get("hybrid_weights") is not None:
        given = parse_weights(options["hybrid_weights"])
        return given, {kind: "query options" for kind in given}
    if retrieval.get("hybrid_weights"):
        return parse_weights(retrieval["hybrid_weights"]), dict(
            retrieval.get("hybrid_weights_source") or {}
        )
    return parse_weights({}), {kind: DEFAULT_SOURCE for kind in DEFAULT_WEIGHTS}
