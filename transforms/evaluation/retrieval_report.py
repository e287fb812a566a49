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
    benchmark: str, rows: Iterable[Mapping[str, object]], snapshot_id: str
) -> str:
    """Markdown: headline metrics and costs per strategy, then per-category breakdowns."""
    table = by_strategy(rows)
    parts = [
        f"**{benchmark}** retrieval, snapshot `{snapshot_id}`\n",
        _markdown_table(table, [*RECALL_METRICS[benchmark], *COST_METRICS]),
    ]
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


def recall_plot_png(benchmark: str, rows: Iterable[Mapping[str, object]]) -> bytes:
    """PNG bar chart: one group of bars per recall metric, one bar per strategy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = by_strategy(rows)
    metrics = [m for m in RECALL_METRICS[benchmark] if any(m in v for v in table.values())]
    width = 0.8 / max(1, len(table))
    figure, axes = plt.subplots(figsize=(max(7.0, 1.3 * len(metrics) + 3), 4.0), dpi=100)
    for index, (strategy, values) in enumerate(table.items()):
        positions = [i + (index - (len(table) - 1) / 2) * width for i in range(len(metrics))]
        axes.bar(positions, [values.get(m, 0.0) for m in metrics], width, label=strategy)
    axes.set_xticks(range(len(metrics)), metrics, rotation=20)
    axes.set_ylim(0, 1)
    axes.set_ylabel("recall (MRR)" if "mrr" in metrics else "recall")
    axes.set_title(f"{benchmark}: recall@k per strategy")
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return buffer.getvalue()
