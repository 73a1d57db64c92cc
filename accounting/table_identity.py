"""What a labelling ledger knows of a γ table: its identity and the guarantee of one release.

Shared by :mod:`darrm.accounting.session` (the ledger) and :mod:`darrm.accounting.queries` (the
composition of its queries), which would otherwise import each other.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from darrm.table import GammaTable

__all__ = ["per_query_budget", "table_fingerprint"]


def table_fingerprint(table: GammaTable) -> str:
    """sha256 of a table's parameters and exact γ values (``float.hex``, in C order for a per-group
    table; its shape is in the parameters): a session's table identity."""
    body = {"params_type": type(table.params).__name__, "params": table.params.to_dict(),
            "gamma": [float(x).hex() for x in np.asarray(table.gamma, dtype=np.float64).ravel()]}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def per_query_budget(table: GammaTable) -> tuple[float, float]:
    """(ε_q, δ_q) of one DaRRM release with this table: (mε, δ), or the disjoint target (ε, δ)."""
    return table.params.query_budget
