"""The disjoint-members certificate (the O(K) reduction of :mod:`darrm.models.disjoint`) and its LP rows."""

from __future__ import annotations

import numpy as np

from ...gamma import validate_gamma
from ...logs import get_logger
from ...mechanism import output_weights
from ...numerics.binomial import OthersPmfs, expected_weights
from ...privacy.certify import Certificate, validate_max_memory, validate_tol
from ...privacy.condition import folded_rows, violation
from .params import DisjointParams

DIRECTIONS = ("D,D'", "D',D")

log = get_logger("certify")


def violations(gamma: np.ndarray, params: DisjointParams) -> np.ndarray:
    """Rigorous bounds v̂ on Pr[A(X)=o] − e^ε Pr[A(X′)=o] − δ (+ mass left out) of DaRRM_γ.

    Shape (C, K, 2, 2): changed-member vertex, n_high, output o, direction (D,D′ / D′,D).
    Computed from the output probabilities themselves (Algorithm 1), not from LP rows:
    Pr[A = 1] with w, Pr[A = 0] with w reversed (γ symmetric), the changed member's law with
    closed-form complements; v̂ ≤ 0 proves the exact violation ≤ 0 (:mod:`darrm.privacy.condition`).
    """
    g = validate_gamma(gamma, params.K)
    w1 = output_weights(g)
    w0 = w1[::-1]  # Pr[A = 0 | L = l] = w_{K−l} exactly for a symmetric γ
    o = params.others
    vs = params.member.changed_vertices()
    vc = params.member.changed_complements()
    chk = params.check
    out = np.empty((vs.shape[0], params.K, 2, 2))
    for oi, w in ((0, w0), (1, w1)):
        a, b = expected_weights(o, w)
        P = vc[:, :1] * a[None, :] + vs[:, :1] * b[None, :]  # (C, K), changed member at p
        Pp = vc[:, 1:] * a[None, :] + vs[:, 1:] * b[None, :]  # at p′
        out[:, :, oi, 0] = violation(P, Pp, chk) + o.dropped[None, :]
        out[:, :, oi, 1] = violation(Pp, P, chk) + o.dropped[None, :]
    return out


def certify_disjoint(gamma: np.ndarray, params: DisjointParams, *, tol: float | None = None,
                     max_memory: float | None = None) -> Certificate:
    """Largest DP violation bound of DaRRM_γ for disjoint members over every (vertex, n_high),
    both outputs and both directions; ``worst_counts`` = (vertex index, n_high).  Certified
    iff ≤ 0 (``tol`` may only make it stricter, as in :func:`darrm.privacy.certify.certify`).
    Refused before any work when its memory (:meth:`DisjointParams.check_memory`) exceeds
    ``max_memory`` bytes (None: the memory available)."""
    t = validate_tol(tol)
    need = params.check_memory(validate_max_memory(max_memory))
    log.debug("disjoint certificate at K=%d: about %.0f MiB peak (estimate)", params.K, need / 2**20)
    V = violations(gamma, params)
    v, n, oi, di = np.unravel_index(int(np.argmax(V)), V.shape)
    return Certificate(float(V[v, n, oi, di]), (int(v), int(n)), int(oi), DIRECTIONS[di],
                       int(V.shape[0] * V.shape[1]), t, params.check.rho)


# ----------------------------------------------------------------------------- LP rows
def vote_count_pmf(others: OthersPmfs, n: int, p: float, K: int) -> np.ndarray:
    """pmf of L = S_i + X (S_i ~ Bern(p)), full length K+1."""
    o, x = others.pmf(n)
    a = np.zeros(K + 1)
    a[o : o + x.size] += (1.0 - p) * x
    a[o + 1 : o + 1 + x.size] += p * x
    return a


def constraint_row(params: DisjointParams, vertex: int, n: int, output: int, direction: int) -> np.ndarray:
    """Folded LP row r (over x = γ(mid..K)) with (r·x − rhs)/2 = the violation of that index."""
    p, pp = params.member.changed_vertices()[vertex]
    a = vote_count_pmf(params.others, n, float(p), params.K)
    ap = vote_count_pmf(params.others, n, float(pp), params.K)
    if direction == 1:
        a, ap = ap, a
    r = folded_rows(a[None, :], ap[None, :], params.exp_eps)[0]
    return r if output == 1 else -r
