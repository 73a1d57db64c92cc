"""Optional accelerator backend for the exhaustive sweep (torch; CUDA when present).

The tables are built on the CPU exactly as in :mod:`darrm.privacy.sweep` (they are small:
C(K+5,5) or K³/3 floats); the gathers and comparisons over all C(K+7,7) multisets — the
part that grows — run on the torch device in float64.  Results equal the numpy path to
float64 rounding (tested on the CPU device; the same code runs on CUDA).
"""

from __future__ import annotations

import numpy as np

from ..errors import require
from ..params import PrivacyParams
from ..privacy.sweep import PureTables, SweepResult, SweepTables, build_pure_tables, build_tables, merge, sweep_c, sweep_R


def _torch():
    return require("torch", "experiments", "the torch backend")


def default_device() -> str:
    torch = _torch()
    return "cuda" if torch.cuda.is_available() else "cpu"


def sweep_torch(
    gamma: np.ndarray, params: PrivacyParams, *, top: int = 0, threshold: float = 0.0, device: str | None = None,
    diverse: bool = True,
) -> SweepResult:
    """Same result as :func:`darrm.privacy.sweep.sweep`, computed with torch on ``device``: the same
    block functions (:func:`darrm.privacy.sweep.sweep_R`, :func:`darrm.privacy.sweep.sweep_c`, memory-bounded
    chunks included) with the tables moved to the device."""
    torch = _torch()
    dev = torch.device(device or default_device())
    g = np.asarray(gamma, dtype=np.float64)
    K, chk = params.K, params.check
    per_block = 1 if diverse else None
    if params.Delta > 0:
        T = build_tables(g, params)
        Tt = SweepTables(K, torch.from_numpy(T.V).to(dev), torch.from_numpy(T.r3).to(dev), T.r2)
        results = [sweep_R(Tt, R, chk, top, threshold, per_block, xp=torch) for R in range(K, -1, -1)]
    else:
        P = build_pure_tables(g, params)
        Pt = PureTables(K, [torch.from_numpy(z).to(dev) for z in P.Z])
        results = [sweep_c(Pt, c, chk, top, threshold, per_block, xp=torch) for c in range(K + 1)]
    return merge(results, top)
