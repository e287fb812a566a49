"""Names of the retrieval strategies, importable without loading any of them (CLI choices)."""

STRATEGY_NAMES = (
    "dense",
    "bm25",
    "hipporag_ppr",
    "memorai_dwpr",
    "gram_paths",
    "kgermar_fusion",
    "real_beam",
)
