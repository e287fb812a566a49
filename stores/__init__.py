"""The storage layer: everything a workspace holds and how it is written and read.

A workspace is one folder (`stores.workspace`): the DuckDB warehouse and its tables
(connections that wait for a writer, DDL from `schemas/`), the LanceDB embedding tables
(`stores.lance_tables`: keyed syncs that write only what changed, indexes), the structural
bank (`stores.structure_table`), immutable snapshots (`stores.snapshots`: content hash,
recording, listing) and the warehouse operations every stage writes through
(`stores.warehouse`). The build writes through this package; the query package `memory/`
only reads through it; `transforms/` never imports it.
"""
