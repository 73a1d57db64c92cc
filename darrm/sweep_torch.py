"""Optional accelerator backend for the exhaustive sweep (torch; CUDA when present).

The tables are built on the CPU exactly as in :mod:`darrm.sweep` (they are small:
C(K+5,5) or K³/3 floats); the gathers and comparisons over all C(K+7,7) multisets — the
part that grows — run on the torch device in float64.  Results equal the numpy path to
float64 rounding (tested on the CPU device; the same code runs on CUDA).
"""

from __future__ import annotations

import numpy as np

from .corners import count_vectors
from .errors import require
from .params import PrivacyParams
from .sweep import SweepResult, TopCollector, build_pure_tables, build_tables, merge, pair_violation


def _torch():
    return require("torch", "experiments", "the torch backend")


def default_device() -> str:
    torch = _torch()
    return "cuda" if torch.cuda.is_available() else "cpu"


def sweep_torch(
    gamma: np.ndarray, params: PrivacyParams, *, top: int = 0, threshold: float = 0.0, device: str | None = None,
    diverse: bool = True,
) -> SweepResult:
    """Same result as :func:`darrm.sweep.sweep`, computed with torch on ``device``."""
    torch = _torch()
    dev = torch.device(device or default_device())
    g = np.asarray(gamma, dtype=np.float64)
    K, e, delta = params.K, params.exp_meps, float(params.delta)
    results = []

    def worst(viol, k):
        vals, idx = torch.topk(viol, min(k, viol.numel()))
        return idx, vals.cpu().numpy()

    if params.Delta > 0:
        T = build_tables(g, params)
        V = torch.from_numpy(T.V).to(dev)
        r3 = torch.from_numpy(T.r3).to(dev)
        for R in range(K, -1, -1):
            inner = torch.from_numpy(count_vectors(R, 6).astype(np.int64)).to(dev)
            n1, n2, n3, n4, n5 = (inner[:, i] for i in (1, 2, 3, 4, 5))
            ia, ib = r3[n1 + n5, n3, n4], r3[n1 + n4, n2, n5]
            col = TopCollector(top, threshold, 8, 1 if diverse else None)
            cd = K - R
            for c in range((cd + 1) // 2, cd + 1):  # swap symmetry, as in darrm.sweep.sweep_R
                d = cd - c
                viol = pair_violation(V[int(T.r2[c, d])][ia], V[int(T.r2[d, c])][ib], e, delta, xp=torch)

                def select(k, viol=viol, c=c, d=d):
                    idx, vals = worst(viol, k)
                    sel = inner[idx].cpu().numpy()
                    n = sel.shape[0]
                    return np.concatenate([sel, np.full((n, 1), c), np.full((n, 1), d)], axis=1), vals

                col.add(float(viol.max()), select)
            results.append(col.result(inner.shape[0] * (cd + 1)))
    else:
        P = build_pure_tables(g, params)
        Z = [torch.from_numpy(z).to(dev) for z in P.Z]
        for c in range(K + 1):
            col = TopCollector(top, threshold, 4, 1 if diverse else None)  # as darrm.sweep.sweep_c
            checked = 0
            for d in range(0, min(c, K - c) + 1):
                ns = K - c - d + 1
                viol = pair_violation(Z[c][d, :ns], Z[d][c, :ns], e, delta, xp=torch)
                checked += ns * (2 if d < c else 1)

                def select(k, viol=viol, c=c, d=d):
                    idx, vals = worst(viol, k)
                    sv = idx.cpu().numpy().astype(np.int64)
                    return np.stack([K - sv - c - d, sv, np.full_like(sv, c), np.full_like(sv, d)], axis=1), vals

                col.add(float(viol.max()), select)
            results.append(col.result(checked))
    return merge(results, top)
