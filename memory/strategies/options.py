"""Which `--option KEY=VALUE` each strategy reads, and what a valid value of each is: the one
place `kgmem query` checks options against before it runs, so that a typo (`--option
bogus=1`) or an impossible value (`--option max_length=-5`) is a one-line error naming the
key instead of an option silently ignored or a strategy run with nonsense.

The keys are those the strategies' modules read (their docstrings say what each does);
PersonalAI's traversal parameters (`astar_*`, `wc_*`, `bs_*`) come from the fields of
their parameter classes, so they cannot drift from what `params_from` accepts.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Mapping
from typing import Any

from memory.personalai.astar import AStarParams
from memory.personalai.beam import BeamParams
from memory.personalai.water_circles import WaterCirclesParams
from memory.strategies.names import STRATEGY_NAMES

Rule = Callable[[Any], str | None]
"""A value's problem, or None when it is valid."""


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def whole(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    return None if ok else "must be a whole number >= 0"


def count(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
    return None if ok else "must be a whole number >= 1"


def number(value: Any) -> str | None:
    return None if _number(value) and value >= 0 else "must be a number >= 0"


def fraction(value: Any) -> str | None:
    return None if _number(value) and 0 <= value <= 1 else "must be a number from 0 to 1"


def boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def text(value: Any) -> str | None:
    return None if isinstance(value, str) and value else "must be text"


def anything(_value: Any) -> str | None:
    return None


def choice(*names: str) -> Rule:
    def rule(value: Any) -> str | None:
        return None if value in names else f"must be one of {', '.join(names)}"

    return rule


def _params(prefix: str, cls: type) -> dict[str, Rule]:
    """The options `<prefix>_<field>` of a PersonalAI parameter class, by field type."""
    by_type: dict[object, Rule] = {bool: boolean, int: whole, float: number, str: text}
    return {
        f"{prefix}_{f.name}": by_type.get(type(f.default), anything)
        for f in dataclasses.fields(cls)
    }


FLAT: dict[str, Rule] = {
    "vector_probes": whole,
    "hybrid_weights": anything,
    "brevity": number,
}
"""What every strategy reads: LanceDB's IVF probes, and `hybrid`'s weights and brevity
prior (`transforms.brevity_prior`), which the graph strategies' prior is made with."""
GRAPH: dict[str, Rule] = {**FLAT, "traversal": choice("on", "off"), "flat_share": fraction}
"""What every graph strategy reads besides: its traversal switch and its blend with the
prior (`memory.traversal`)."""
PERSONALAI: dict[str, Rule] = {
    **GRAPH,
    "restriction": text,
    "max_node_segments": count,
    "aligned_entities": whole,
    "query_phrases": whole,
    "flat_seeds": whole,
    "top_n": count,
    "prior_nodes": anything,
    "segment_score": text,
    **_params("astar", AStarParams),
    **_params("wc", WaterCirclesParams),
    **_params("bs", BeamParams),
}

OPTIONS: dict[str, dict[str, Rule]] = {
    "dense": FLAT,
    "bm25": FLAT,
    "hybrid": FLAT,
    "hipporag_ppr": {
        **GRAPH,
        "damping": fraction,
        "query_link_share": fraction,
        "temperature": number,
        "query_links": text,
        "walk_threshold": number,
        "phrase_weight": number,
        "co_occurs_weight": number,
        "synonym_weight": number,
    },
    "memorai_dwpr": {
        **GRAPH,
        "seeds": count,
        "bridge_cap": whole,
        "damping": fraction,
        "uniform_weights": boolean,
        "tolerance": number,
        "max_iterations": count,
    },
    "gram_paths": {**GRAPH, "max_length": count, "seed_nodes": whole},
    "kgermar_fusion": {
        **GRAPH,
        "bank_budget": choice("k", "split"),
        "entity_k": count,
        "node_share": fraction,
        "layers": count,
        "spread_threshold": number,
        "fusion_weights": anything,
    },
    "real_beam": {
        **GRAPH,
        "seed_nodes": whole,
        "untyped_links": choice("on", "off"),
        "beam_width": count,
        "max_depth": count,
        "expansions": count,
        "delta_qr": number,
        "delta_lc": number,
        "repairs": anything,
        "evaluator": choice("embedding", "llm"),
        "llm_backend": text,
        "llm_model": text,
        "llm_base_url": text,
        "llm_response_format": text,
        "llm_timeout_s": number,
        "llm_max_attempts": count,
        "llm_cache": text,
    },
    **{name: PERSONALAI for name in STRATEGY_NAMES if name.startswith("personalai_")},
}


def check_options(strategy: str, options: Mapping[str, Any]) -> None:
    """Raise ValueError naming the first option `strategy` does not read (with the closest
    keys it does read) or whose value is not valid."""
    known = OPTIONS.get(strategy, FLAT)
    for key, value in options.items():
        rule = known.get(key)
        if rule is None:
            close = difflib.get_close_matches(key, known, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ValueError(
                f"--option {key}: not an option of strategy {strategy} "
                f"(its module docstring lists them){hint}"
            )
        problem = rule(value)
        if problem:
            raise ValueError(f"--option {key}={value!r}: {problem}")
