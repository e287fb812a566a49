"""Side-by-side report of a retrieval evaluation: Markdown tables and a recall@k bar chart.

Input rows are (strategy, metric, value) as `memory.evaluation.retrieval_scores` produces
them; per-category metrics are named `metric[category]`. The same rendering goes into the
Dagster asset metadata, the results files and the CLI, so they cannot disagree.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping

RECALL_METRICS = {
    "musique": ("recall@2", "recall@5", "mrr"),
    "locomo": (
        "turn_recall@3",
        "turn_recall@5",
        "turn_recall@10",
        "session_recall@3",
        "session_recall@5",
        "session_recall@10",
    ),
}
"""The headline quality metrics of each benchmark (also what the regression checks watch)."""
UNIT_METRICS = {
    "musique": (),
    "locomo": ("session_unit_recall@3", "session_unit_recall@5", "session_unit_recall@10"),
}
"""Metrics of another retrieval unit (LoCoMo: sessions ranked as units, `--unit session`),
in a table of their own."""
COST_METRICS = (
    "latency_p50_ms",
    "latency_p95_ms",
    "llm_calls_per_query",
    "llm_tokens_per_query",
    "questions",
)
CATEGORY_METRICS = {"musique": ("recall@5",), "locomo": ("turn_recall@5", "session_recall@5")}
"""The metrics broken down per question category in the report."""


def by_strategy(rows: Iterable[Mapping[str, object]]) -> dict[str, dict[str, float]]:
    """{strategy: {metric: value}} from rows."""
    table: dict[str, dict[str, float]] = {}
    for row in rows:
        table.setdefault(str(row["strategy"]), {})[str(row["metric"])] = float(row["value"])
    return table


def comparison_markdown(
    benchmark: str,
    rows: Iterable[Mapping[str, object]],
    snapshot_id: str,
    settings: Mapping[str, object] | None = None,
) -> str:
    """Markdown: headline metrics and costs per strategy, then per-category breakdowns;
    with `settings`, the build settings of the snapshot first (`settings_line`)."""
    table = by_strategy(rows)
    parts = [f"**{benchmark}** retrieval, snapshot `{snapshot_id}`\n"]
    if settings:
        parts.append(settings_line(settings) + "\n")
    parts.append(_markdown_table(table, [*RECALL_METRICS[benchmark], *COST_METRICS]))
    if UNIT_METRICS[benchmark] and any(
        m in values for values in table.values() for m in UNIT_METRICS[benchmark]
    ):
        parts.append("\nsessions as the retrieval unit (k distinct sessions)\n")
        parts.append(_markdown_table(table, list(UNIT_METRICS[benchmark])))
    for metric in CATEGORY_METRICS[benchmark]:
        categories = sorted(
            {
                m[len(metric) + 1 : -1]
                for v in table.values()
                for m in v
                if m.startswith(metric + "[")
            }
        )
        if categories:
            columns = [f"{metric}[{c}]" for c in categories]
            parts.append(f"\n{metric} per question category\n")
            parts.append(_markdown_table(table, columns))
    return "\n".join(parts) + "\n"


def settings_line(settings: Mapping[str, object]) -> str:
    """The build settings as one Markdown line, `key=value` in key order, so that two
    evaluations' reports show what they were built with."""
    pairs = ", ".join(f"`{key}={settings[key]}`" for key in sorted(settings))
    return f"build settings: {pairs}"


def _markdown_table(table: Mapping[str, Mapping[str, float]], columns: list[str]) -> str:
    lines = ["| strategy | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for strategy, values in table.items():
        cells = [_cell(c, values.get(c)) for c in columns]
        lines.append(f"| {strategy} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cell(column: str, value: float | None) -> str:
    if value is None:
        return "-"
    if column == "questions":
        return f"{value:.0f}"
    return f"{value:.1f}" if column.endswith("_ms") else f"{value:.3f}"


HEADLINE = {"musique": "recall@5", "locomo": "turn_recall@10"}
"""The metric of the ablation panel: each strategy with and without its traversal."""
ABLATION_SUFFIX = ":no_traversal"
"""An evaluated name's suffix for a strategy with its traversal off (`memory.traversal`)."""


def recall_plot_png(benchmark: str, rows: Iterable[Mapping[str, object]]) -> bytes:
    """PNG: one group of bars per recall metric, one bar per strategy (its ablation rows
    left out there); below, where the evaluation has ablation rows, the headline metric of
    each graph strategy with its traversal (solid) and without it (hatched)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = by_strategy(rows)
    ablated = {
        n[: -len(ABLATION_SUFFIX)]: v for n, v in table.items() if n.endswith(ABLATION_SUFFIX)
    }
    main = {n: v for n, v in table.items() if not n.endswith(ABLATION_SUFFIX)}
    metrics = [
        m
        for m in (*RECALL_METRICS[benchmark], *UNIT_METRICS[benchmark])
        if any(m in v for v in main.values())
    ]
    width = 0.8 / max(1, len(main))
    panels = 2 if ablated else 1
    figure, axes_list = plt.subplots(
        panels, 1, figsize=(max(8.0, 1.3 * len(metrics) + 3), 4.0 * panels), dpi=100, squeeze=False
    )
    axes = axes_list[0][0]
    for index, (strategy, values) in enumerate(main.items()):
        positions = [i + (index - (len(main) - 1) / 2) * width for i in range(len(metrics))]
        axes.bar(positions, [values.get(m, 0.0) for m in metrics], width, label=strategy)
    axes.set_xticks(range(len(metrics)), metrics, rotation=20)
    axes.set_ylim(0, 1)
    axes.set_ylabel("recall (MRR)" if "mrr" in metrics else "recall")
    axes.set_title(f"{benchmark}: recall@k per strategy")
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if ablated:
        _ablation_panel(axes_list[1][0], HEADLINE[benchmark], main, ablated)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return buffer.getvalue()


def _ablation_panel(
    axes: object,
    metric: str,
    main: Mapping[str, Mapping[str, float]],
    ablated: Mapping[str, Mapping[str, float]],
) -> None:
    """Per graph strategy, `metric` with its traversal and without it, side by side."""
    names = [n for n in main if n in ablated]
    positions = range(len(names))
    axes.bar(
        [p - 0.2 for p in positions],
        [main[n].get(metric, 0.0) for n in names],
        0.4,
        label="with its traversal",
    )
    axes.bar(
        [p + 0.2 for p in positions],
        [ablated[n].get(metric, 0.0) for n in names],
        0.4,
        hatch="//",
        fill=False,
        label="traversal off (= hybrid)",
    )
    axes.set_xticks(list(positions), names, rotation=30, ha="right", fontsize="small")
    axes.set_ylim(0, 1)
    axes.set_ylabel(metric)
    axes.set_title(f"what each strategy's traversal adds: {metric}")
    axes.legend(fontsize="small")
