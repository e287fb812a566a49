"""LLM triplet extraction: REAL atomic facts, MemORAI turn-cited triplets, PersonalAI theses.

One module per job: `base` (request, completion, backend protocol), the backends
(`http_backend`, `llama_cpp_backend`, `transformers_backend`, created by `backends`),
`prompts` (versioned templates), `gate` (which segments are sent), `cache` (DuckDB call
cache), `runner` (concurrency, retries, timeouts), `matching` and `extract` (answers to
rows or quarantine), `stats` (counters), `config`, `batch` (one batch through all of it,
without Beam) and `dofn` (the Beam DoFn). Nothing here is imported eagerly, so using the
HTTP backend never loads llama.cpp or torch.
"""
