"""Names of the retrieval strategies, importable without loading any of them (CLI choices)."""

STRATEGY_NAMES = (
    "dense",
    "bm25",
    "hybrid",
    "hipporag_ppr",
    "memorai_dwpr",
    "gram_paths",
    "kgermar_fusion",
    "personalai_astar",
    "personalai_water_circles",
    "personalai_beam",
    "personalai_wc_bs",
    "personalai_astar_bs",
    "personalai_astar_wc",
    "real_beam",
)
