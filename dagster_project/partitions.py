"""Collections are dynamic partitions: `kgmem build` (or the UI) registers one per collection."""

import dagster as dg

collections_partitions = dg.DynamicPartitionsDefinition(name="collections")
