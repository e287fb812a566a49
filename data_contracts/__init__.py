"""Data contracts for the tables kgmem writes, checked with Great Expectations.

`suites` declares one expectation suite per table in code; `validate` runs a suite on a
pandas frame and condenses the result into a small report that pipelines and Dagster
asset checks can act on, so a broken batch stops before it reaches the stores.

GX usage analytics are switched off here, before any submodule imports GX.
"""

import os

os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

from data_contracts.suites import FACT_OPERATIONS, SUITES
from data_contracts.validate import ContractFailure, ContractReport, validate_frame

__all__ = [
    "FACT_OPERATIONS",
    "SUITES",
    "ContractFailure",
    "ContractReport",
    "validate_frame",
]
