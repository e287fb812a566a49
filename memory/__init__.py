"""Query-time package: open an immutable memory snapshot and retrieve from it.

Free of Dagster imports, so an agent can use a snapshot without the orchestrator.
`Memory` and `QueryHit` load on first use, so importing a light module of the package
(`stores.workspace`, `memory.strategies.names`) costs nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memory.memory import Memory, QueryHit

__all__ = ["Memory", "QueryHit"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from memory import memory

        return getattr(memory, name)
    raise AttributeError(f"module 'memory' has no attribute {name!r}")
