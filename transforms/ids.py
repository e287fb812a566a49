"""Deterministic content-hash identifiers.

Every id in kgmem is a hash of the content that defines the record, so re-running a stage
on the same input yields the same ids and an unchanged document is recognised as such.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

ID_HEX_CHARS = 20


def content_id(*parts: Any) -> str:
    """Return a stable hex id for `parts` (any JSON-serialisable values, order matters)."""
    payload = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:ID_HEX_CHARS]
