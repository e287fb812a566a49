"""Query-time package: open an immutable memory snapshot and retrieve from it.

Free of Dagster imports, so an agent can use a snapshot without the orchestrator.
"""

from memory.memory import Memory, QueryHit

__all__ = ["Memory", "QueryHit"]
