"""An independent 40-digit brute force for grouped members, shared by the certificate tests.

It puts every member, one by one (ordered, not as multisets), at every vertex of its own group's
region, builds each group's vote-count pmf with mpmath, and evaluates Lemma 3.4's four
inequalities exactly, both outputs directly (no reflection argument), with γ read from the total
count (γ(L)) or from the groups' counts (γ(l_1, …, l_G)).  It shares no code with
:mod:`darrm.models.groups` except the parameters, and recomputes the corners from (ε_g, Δ_g) itself.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import mpmath
import numpy as np
import pytest

mpmath.mp.dps = 40


def vertices(eps: float, Delta: float) -> list[tuple]:
    """The vertices of {(p, p′): p ≤ e^ε p′ + Δ, 1 − p ≤ e^ε (1 − p′) + Δ, and swapped} ∩ [0, 1]²."""
    e, D = mpmath.exp(mpmath.mpf(eps)), mpmath.mpf(Delta)
    hi, lo = (e + D) / (e + 1), (1 - D) / (e + 1)
    pts = [(0, 0), (1, 1), (hi, lo), (lo, hi)]
    if Delta > 0:
        pts += [(0, D), (D, 0), (1 - D, 1), (1, 1 - D)]
    return [(mpmath.mpf(p), mpmath.mpf(q)) for p, q in pts]


def member_pmf(ps) -> list:
    """The Poisson-binomial pmf of independent votes with probabilities ``ps`` (mpmath)."""
    a = [mpmath.mpf(1)]
    for p in ps:
        a = [(a[i] if i < len(a) else 0) * (1 - p) + (a[i - 1] * p if i > 0 else 0) for i in range(len(a) + 1)]
    return a


def brute_force_outputs(gamma: np.ndarray, params) -> list[tuple]:
    """(Pr[A(D) = o], Pr[A(D′) = o]) for o = 1 and o = 0 at every ordered assignment of member
    vertices, in 40-digit arithmetic; ``gamma`` is γ(0..K) or, with ``params.gamma_form ==
    "per-group"``, the table γ(l_1, …, l_G)."""
    mid = (params.K + 1) // 2
    g = np.asarray(gamma, dtype=np.float64)
    cells = list(itertools.product(*[range(gr.size + 1) for gr in params.groups]))

    def gamma_at(l: tuple) -> mpmath.mpf:
        return mpmath.mpf(float(g[l] if params.gamma_form == "per-group" else g[sum(l)]))

    w1 = {l: gamma_at(l) * (1 if sum(l) >= mid else 0) + (1 - gamma_at(l)) / 2 for l in cells}
    per_group = [list(itertools.product(vertices(gr.eps, gr.Delta), repeat=gr.size)) for gr in params.groups]
    pmfs = [[(member_pmf([c[0] for c in conf]), member_pmf([c[1] for c in conf])) for conf in confs]
            for confs in per_group]
    out = []
    for combo in itertools.product(*pmfs):
        P = {o: [mpmath.mpf(0), mpmath.mpf(0)] for o in (0, 1)}
        for l in cells:
            pa = mpmath.fprod(ab[0][k] for ab, k in zip(combo, l, strict=True))
            pb = mpmath.fprod(ab[1][k] for ab, k in zip(combo, l, strict=True))
            P[1][0] += pa * w1[l]
            P[1][1] += pb * w1[l]
            P[0][0] += pa * (1 - w1[l])
            P[0][1] += pb * (1 - w1[l])
        out += [tuple(P[1]), tuple(P[0])]
    return out


def brute_force_violation(gamma: np.ndarray, params) -> mpmath.mpf:
    """max over every ordered assignment of member vertices, both outputs and both directions of
    Pr[A(D) = o] − e^ε Pr[A(D′) = o] − δ, in 40-digit arithmetic."""
    e, d = mpmath.exp(mpmath.mpf(params.target_eps)), mpmath.mpf(params.target_delta)
    return max(max(a - e * b - d, b - e * a - d) for a, b in brute_force_outputs(gamma, params))


def brute_force_profile(gamma: np.ndarray, params, eps: list[float]) -> list[mpmath.mpf]:
    """δ(ε′) = max over every assignment, output and direction of max(0, Pr[A(D)=o] − e^{ε′}Pr[A(D′)=o])."""
    outs = brute_force_outputs(gamma, params)
    res = []
    for x in eps:
        s = mpmath.exp(mpmath.mpf(x))
        res.append(max([mpmath.mpf(0)] + [max(a - s * b, b - s * a) for a, b in outs]))
    return res


@pytest.fixture(scope="session")
def brute():
    """The brute force (module docstring): ``brute.violation(γ, params)``, ``brute.profile(γ, params,
    eps)``, ``brute.vertices``, ``brute.pmf``."""
    return SimpleNamespace(violation=brute_force_violation, profile=brute_force_profile, vertices=vertices,
                           pmf=member_pmf)
