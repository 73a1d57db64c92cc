"""Optional accelerator backend for the exhaustive sweep (torch; CUDA when present).

The tables are built on the CPU exactly as in :mod:`darrm.sweep` (they are small:
C(K+5,5) or K³/3 floats); the gathers and comparisons over all C(K+7,7) multisets — the
part that grows — run on the torch device in float64.  Results equal the numpy path to
float64 rounding (tested on the CPU device; the same code runs on CUDA).
"""

from __future__ import annotations

import numpy as np

from .corners import count_vectors
from .params import PrivacyParams
from .sweep import SweepBlockResult, SweepResult, build_pure_tables, build_tables, merge


def _torch():
    try:
        import torch
    except ImportError:  # pragma: no cover - optional extra
        from .errors import ParameterError

        raise ParameterError("backend", "the torch backend needs torch: pip install 'darrm[experiments]'") from None
    return torch


def default_device() -> str:
    torch = _torch()
    return "cuda" if torch.cuda.is_available() else "cpu"


def _violation(torch, pa, pb, e, delta):
    v = torch.maximum(torch.maximum(pa - e * pb, pb - e * pa), torch.maximum((1 - pa) - e * (1 - pb), (1 - pb) - e * (1 - pa)))
    return v - delta


def _topk(torch, viol, top, threshold, make_counts):
    m = float(viol.max())
    if top <= 0 or m <= threshold:
        return m, None, None
    k = min(top, viol.numel())
    vals, idx = torch.topk(viol, k)
    keep = vals > threshold
    return m, make_counts(idx[keep]), vals[keep].cpu().numpy()


def sweep_torch(
    gamma: np.ndarray, params: PrivacyParams, *, top: int = 0, threshold: float = 0.0, device: str | None = None
) -> SweepResult:
    """Same result as :func:`darrm.sweep.sweep`, computed with torch on ``device``."""
    torch = _torch()
    dev = torch.device(device or default_device())
    g = np.asarray(gamma, dtype=np.float64)
    K, e, delta = params.K, params.exp_meps, float(params.delta)
    results = []
    if params.Delta > 0:
        T = build_tables(g, params)
        V = torch.from_numpy(T.V).to(dev)
        r3 = torch.from_numpy(T.r3).to(dev)
        for R in range(K, -1, -1):
            inner = torch.from_numpy(count_vectors(R, 6).astype(np.int64)).to(dev)
            n1, n2, n3, n4, n5 = (inner[:, i] for i in (1, 2, 3, 4, 5))
            ia, ib = r3[n1 + n5, n3, n4], r3[n1 + n4, n2, n5]
            cd = K - R
            for c in range((cd + 1) // 2, cd + 1):
                d = cd - c
                viol = _violation(torch, V[int(T.r2[c, d])][ia], V[int(T.r2[d, c])][ib], e, delta)

                def counts(idx, c=c, d=d):
                    sel = inner[idx].cpu().numpy()
                    n = sel.shape[0]
                    return np.concatenate([sel, np.full((n, 1), c), np.full((n, 1), d)], axis=1)

                m, cand, vv = _topk(torch, viol, top, threshold, counts)
                results.append(SweepBlockResult(m, cand if cand is not None else np.zeros((0, 8), np.int64),
                                                vv if vv is not None else np.zeros(0),
                                                inner.shape[0] * (2 if c != d else 1)))
    else:
        P = build_pure_tables(g, params)
        Z = [torch.from_numpy(z).to(dev) for z in P.Z]
        for c in range(K + 1):
            for d in range(0, min(c, K - c) + 1):
                ns = K - c - d + 1
                viol = _violation(torch, Z[c][d, :ns], Z[d][c, :ns], e, delta)

                def counts(idx, c=c, d=d):
                    s = idx.cpu().numpy().astype(np.int64)
                    return np.stack([K - s - c - d, s, np.full_like(s, c), np.full_like(s, d)], axis=1)

                m, cand, vv = _topk(torch, viol, top, threshold, counts)
                results.append(SweepBlockResult(m, cand if cand is not None else np.zeros((0, 4), np.int64),
                                                vv if vv is not None else np.zeros(0), ns * (2 if d < c else 1)))
    return merge(results, top)
