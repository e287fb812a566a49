"""The workspace stores as a Dagster resource: `stores.warehouse`'s operations, with the
workspace folder as resource config (`KGMEM_HOME` by default)."""

from __future__ import annotations

import dagster as dg
from pydantic import Field

from stores.warehouse import WarehouseStore
from stores.workspace import default_home


class WarehouseResource(dg.ConfigurableResource, WarehouseStore):
    """The workspace folder (`KGMEM_HOME`): DuckDB warehouse, LanceDB tables, Parquet."""

    root: str = Field(default_factory=lambda: str(default_home()), description="workspace folder")
