"""Partition-aware DaRRM: members trained on *disjoint* shards (issue 8).

The DaRRM paper (Problem 1.1) lets every one of the K members depend on the record
that differs between neighbouring data sets D, D′.  When member i only sees shard i
of a partition fixed independently of the records' values, a neighbouring pair
changes **one** member i; every other member j has the same output law under D and
D′: p_j = p′_j.  This module computes the exact worst case of that setting and the
optimal γ for it.

Member-privacy models (what is known about one member's output probability
p = Pr[member votes 1]):

* :class:`NonPrivate` — nothing: the changed member has (p, p′) ∈ [0,1]² (vertices
  {0,1}²), an unchanged member has p_j ∈ [0, 1] (ends {0, 1}).
* :class:`ApproxDP` (ε, Δ) — the changed member's (p, p′) lies in the (ε, Δ)-DP polygon
  F (8 vertices for Δ > 0, 4 for Δ = 0; :func:`darrm.corners.corners`); an unchanged
  member is arbitrary: ends {0, 1}.
* :class:`LocalRR` (ε0) — the member computes any (possibly randomised) bit from its
  shard and reports it through ε0-randomised response, so p ∈ [r, 1−r] with
  r = 1/(e^{ε0}+1): the changed member's region is the square [r, 1−r]² (vertices
  (r, r), (r, 1−r), (1−r, r), (1−r, 1−r)), an unchanged member has ends {r, 1−r}.

The privacy requirement for a per-query target (ε, δ) — now free, not mε — is, for
both outputs o ∈ {0, 1} and both directions,

    Pr[A(D) = o] ≤ e^ε Pr[A(D′) = o] + δ,   A = DaRRM_γ (Algorithm 1).

**Reduction to O(K) constraints (proof).**  Let L = S_i + X with S_i ~ Bern(p_i) the
changed member's vote and X = Σ_{j≠i} S_j, S_j ~ Bern(p_j) independent.  With
w_l = Pr[A = 1 | L = l] (:func:`darrm.mechanism.output_weights`),

    Pr[A(D) = 1] = (1 − p_i)·E[w_X] + p_i·E[w_{X+1}],

and Pr[A(D′) = 1] is the same with p′_i; Pr[A = 0] uses 1 − w.  Hence the cost
g = Pr[A(D)=o] − e^ε Pr[A(D′)=o] − δ is (a) affine in the pair (p_i, p′_i) jointly
(the first term depends only on p_i, the second only on p′_i, each affinely), so its
maximum over the convex polygon of the changed member is attained at a vertex; and
(b) for every j ≠ i, affine in p_j (= p′_j) with the others fixed, because the law of
X is a product measure and E[h(X)] is multilinear in (p_j)_j — so the maximum over
the interval [lo, hi] of p_j is attained at lo or hi, and applying this coordinate by
coordinate (a maximum over a box of a function affine in each coordinate is attained
at a corner) every unchanged member may be put at an end.  (c) The law of X is
invariant under permuting the members, so at the ends only the number n of members
at ``hi`` matters: X ~ Bin(n, hi) ⊕ Bin(K−1−n, lo).  The worst case over all
admissible members is therefore the maximum over (vertex v of the changed member,
n ∈ {0..K−1}, o, direction): C·K·4 numbers — O(K), versus the C(K+C−1, K)
multisets of the shared-data analysis (Lemma 5.1).  For {0, 1} ends X = n exactly.

Exact arithmetic in float64: the pmf of X is built from log-space binomial pmfs
(:func:`binomial_window`, same formula as :func:`darrm.poisson_binomial.binomial_pmf`
on a Hoeffding window) convolved directly (non-negative terms, no FFT); a bound τ_n
(≤ ~4e-30) on the mass left out is *added* to every violation of the certificate, so
truncation can only make it stricter.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import expit, gammaln

from .certify import DEFAULT_TOL, Certificate
from .constraints import folded_rows
from .corners import corners
from .errors import CertificationError, ParameterError
from .gamma import symmetric_from_upper, validate_gamma
from .lp import expected_signed_error, objective_coefficients, repair, solve_lp
from .mechanism import output_weights
from .params import _finite, validate_K
from .prior import IIDPrior, Prior
from .table import GammaTable

#: Binomial pmf entries below this are dropped from the window (their mass is accounted for).
PMF_CUTOFF = 1e-30

DIRECTIONS = ("D,D'", "D',D")

#: Subtracted from every LP cost: among (near-)optimal γ prefer the largest.
TIE_BREAK = 1e-8


# ----------------------------------------------------------------------------- member models
def _eps(name: str, value: float) -> float:
    """A finite ε in (0, 700] (e^ε must be representable)."""
    x = _finite(name, value)
    if not 0.0 < x <= 700.0:
        raise ParameterError(name, f"must lie in (0, 700], got {value!r}")
    return x


def _prob(name: str, value: float) -> float:
    """A δ or Δ in [0, 1)."""
    x = _finite(name, value)
    if not 0.0 <= x < 1.0:
        raise ParameterError(name, f"must lie in [0, 1), got {value!r}")
    return x


class MemberPrivacy:
    """What is known about one member's vote probability (see the module docstring)."""

    def changed_vertices(self) -> np.ndarray:  # pragma: no cover - interface
        """Vertices (C, 2) of the region of (p_i, p′_i) of the member whose shard changes."""
        raise NotImplementedError

    def unchanged_ends(self) -> tuple[float, float]:  # pragma: no cover - interface
        """(lo, hi): the interval of p_j = p′_j of a member whose shard is unchanged."""
        raise NotImplementedError

    def to_dict(self) -> dict:  # pragma: no cover - interface
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class NonPrivate(MemberPrivacy):
    """Members with no privacy guarantee (arbitrary functions of their own shard)."""

    def changed_vertices(self) -> np.ndarray:
        return np.array([(0.0, 0.0), (1.0, 1.0), (0.0, 1.0), (1.0, 0.0)])

    def unchanged_ends(self) -> tuple[float, float]:
        return 0.0, 1.0

    def to_dict(self) -> dict:
        return {"kind": "nonprivate"}

    def describe(self) -> str:
        return "non-private members"


@dataclass(frozen=True)
class ApproxDP(MemberPrivacy):
    """Members that are (ε, Δ)-DP with respect to their own shard."""

    eps: float
    Delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", _eps("member.eps", self.eps))
        object.__setattr__(self, "Delta", _prob("member.Delta", self.Delta))

    def changed_vertices(self) -> np.ndarray:
        return corners(self.eps, self.Delta)

    def unchanged_ends(self) -> tuple[float, float]:
        return 0.0, 1.0

    def to_dict(self) -> dict:
        return {"kind": "approx-dp", "eps": self.eps, "Delta": self.Delta}

    def describe(self) -> str:
        return f"({self.eps:g}, {self.Delta:g})-DP members"


@dataclass(frozen=True)
class LocalRR(MemberPrivacy):
    """Members that report their (arbitrary) bit through ε0-randomised response."""

    eps0: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps0", _eps("member.eps0", self.eps0))

    @property
    def flip(self) -> float:
        """r = 1/(e^{ε0}+1): the probability that RR reports the other bit."""
        return float(expit(-self.eps0))

    def changed_vertices(self) -> np.ndarray:
        r, s = self.flip, float(expit(self.eps0))
        return np.array([(r, r), (s, s), (s, r), (r, s)])

    def unchanged_ends(self) -> tuple[float, float]:
        return self.flip, float(expit(self.eps0))

    def to_dict(self) -> dict:
        return {"kind": "rr", "eps0": self.eps0}

    def describe(self) -> str:
        return f"members behind {self.eps0:g}-randomised response"


def member_from_dict(d: dict) -> MemberPrivacy:
    """Inverse of ``to_dict`` (γ files)."""
    if not isinstance(d, dict) or "kind" not in d:
        raise ParameterError("model", f"must be a dict with a 'kind', got {d!r}")
    kind = d["kind"]
    if kind == "nonprivate":
        return NonPrivate()
    if kind == "approx-dp":
        return ApproxDP(d.get("eps"), d.get("Delta", 0.0))
    if kind == "rr":
        return LocalRR(d.get("eps0"))
    raise ParameterError("model", f"unknown member model kind {kind!r}")


def parse_member(spec: str) -> MemberPrivacy:
    """CLI spelling: ``nonprivate`` | ``EPS,DELTA`` (or ``EPS``) | ``rr:EPS0``."""
    s = str(spec).strip().lower()
    if s in ("nonprivate", "non-private", "none"):
        return NonPrivate()
    try:
        if s.startswith("rr:"):
            return LocalRR(float(s[3:]))
        parts = s.split(",")
        if len(parts) in (1, 2):
            return ApproxDP(float(parts[0]), float(parts[1]) if len(parts) == 2 else 0.0)
    except ValueError:
        pass
    raise ParameterError("member-privacy", f"expected nonprivate, EPS,DELTA or rr:EPS0, got {spec!r}")


# ----------------------------------------------------------------------------- parameters
@dataclass(frozen=True)
class DisjointParams:
    """K members on disjoint shards, each described by ``member``; target per-query (ε, δ)."""

    K: int
    member: MemberPrivacy
    target_eps: float
    target_delta: float = 0.0

    def __post_init__(self) -> None:
        K = validate_K(self.K)
        if not isinstance(self.member, MemberPrivacy):
            raise ParameterError("member", f"must be NonPrivate, ApproxDP or LocalRR, got {self.member!r}")
        object.__setattr__(self, "K", K)
        object.__setattr__(self, "target_eps", _eps("target_eps", self.target_eps))
        object.__setattr__(self, "target_delta", _prob("target_delta", self.target_delta))

    @property
    def exp_eps(self) -> float:
        return math.exp(self.target_eps)

    @property
    def rhs(self) -> float:
        """Right-hand side of the folded rows (Lemma 3.4 form): e^ε − 1 + 2δ."""
        return math.expm1(self.target_eps) + 2.0 * self.target_delta

    @cached_property
    def others(self) -> "OthersPmfs":
        lo, hi = self.member.unchanged_ends()
        return others_pmfs(self.K - 1, lo, hi)

    def to_dict(self) -> dict:
        return {"members": "disjoint", "K": self.K, "member": self.member.to_dict(),
                "target_eps": self.target_eps, "target_delta": self.target_delta}


# ----------------------------------------------------------------------------- pmfs of X
@dataclass(frozen=True)
class OthersPmfs:
    """For n = 0..N: the law of X = Bin(n, hi) ⊕ Bin(N−n, lo) on its window, stored flat.

    Entry t of the flat arrays is Pr[X = pos[t]] for the n whose block starts at
    ``starts[n]`` (blocks are contiguous windows of support points); ``dropped[n]`` is
    the (tiny) mass outside the window of n.
    """

    N: int
    pos: np.ndarray
    values: np.ndarray
    starts: np.ndarray
    dropped: np.ndarray

    def pmf(self, n: int) -> tuple[int, np.ndarray]:
        """(offset, window) of the law of X for n members at ``hi``."""
        a = int(self.starts[n])
        b = int(self.starts[n + 1]) if n < self.N else self.values.size
        return int(self.pos[a]), self.values[a:b]


def binomial_window(n: int, p: float, cutoff: float = PMF_CUTOFF) -> tuple[int, np.ndarray, float]:
    """(offset, pmf on a window, bound on the mass outside it) of Bin(n, p), in log space.

    The window is μ ± t with t = sqrt(n·ln(2/cutoff)/2): by Hoeffding's inequality the
    mass outside it is ≤ 2·exp(−2t²/n) = cutoff.  Entries < cutoff at the window's ends
    are trimmed and their (exactly summed) mass added to the bound.
    """
    mu = n * p
    t = math.sqrt(n * math.log(2.0 / cutoff) / 2.0)
    a, b = max(0, math.floor(mu - t)), min(n, math.ceil(mu + t))
    ls = np.arange(a, b + 1, dtype=np.float64)
    logc = gammaln(n + 1.0) - gammaln(ls + 1.0) - gammaln(n - ls + 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(ls == 0, 0.0, ls * math.log(p) if p > 0 else -np.inf)
        t2 = np.where(ls == n, 0.0, (n - ls) * math.log1p(-p) if p < 1 else -np.inf)
    pmf = np.exp(logc + t1 + t2)
    outside = cutoff if (a > 0 or b < n) else 0.0
    keep = np.nonzero(pmf >= cutoff)[0]
    i, j = int(keep[0]), int(keep[-1]) + 1  # binomial pmfs are unimodal: one window
    return a + i, pmf[i:j], outside + float(pmf[:i].sum() + pmf[j:].sum())


def others_pmfs(N: int, lo: float, hi: float, cutoff: float = PMF_CUTOFF) -> OthersPmfs:
    """Laws of the unchanged members' vote count for every number n ∈ {0..N} of them at ``hi``."""
    pos, vals, starts, drop = [], [], np.zeros(N + 1, dtype=np.int64), np.zeros(N + 1)
    size = 0
    for n in range(N + 1):
        ay, y, ty = binomial_window(n, hi, cutoff)
        az, z, tz = binomial_window(N - n, lo, cutoff)
        x = np.convolve(y, z)
        starts[n] = size
        size += x.size
        pos.append(np.arange(ay + az, ay + az + x.size))
        vals.append(x)
        drop[n] = ty + tz
    return OthersPmfs(N, np.concatenate(pos), np.concatenate(vals), starts, drop)


def expected_weights(others: OthersPmfs, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(E[w_X], E[w_{X+1}]) for every n: arrays of length N+1 (w has length N+2 = K+1)."""
    a = np.add.reduceat(others.values * w[others.pos], others.starts)
    b = np.add.reduceat(others.values * w[others.pos + 1], others.starts)
    return a, b


def violations(gamma: np.ndarray, params: DisjointParams) -> np.ndarray:
    """Violations Pr[A(X)=o] − e^ε Pr[A(X′)=o] − δ (+ dropped mass) of DaRRM_γ.

    Shape (C, K, 2, 2): changed-member vertex, n_high, output o, direction (D,D′ / D′,D).
    Computed from the output probabilities themselves (Algorithm 1), not from LP rows.
    """
    g = validate_gamma(gamma, params.K)
    w1 = output_weights(g)
    w0 = 1.0 - output_weights(g)  # Pr[A = 0 | L]
    o = params.others
    vs = params.member.changed_vertices()
    e, d = params.exp_eps, params.target_delta
    out = np.empty((vs.shape[0], params.K, 2, 2))
    for oi, w in ((0, w0), (1, w1)):
        a, b = expected_weights(o, w)
        P = (1.0 - vs[:, :1]) * a[None, :] + vs[:, :1] * b[None, :]  # (C, K), changed member at p
        Pp = (1.0 - vs[:, 1:]) * a[None, :] + vs[:, 1:] * b[None, :]  # at p′
        out[:, :, oi, 0] = P - e * Pp - d + o.dropped[None, :]
        out[:, :, oi, 1] = Pp - e * P - d + o.dropped[None, :]
    return out


def certify_disjoint(gamma: np.ndarray, params: DisjointParams, *, tol: float | None = None) -> Certificate:
    """Largest DP violation of DaRRM_γ for disjoint members over every (vertex, n_high),
    both outputs and both directions; ``worst_counts`` = (vertex index, n_high)."""
    V = violations(gamma, params)
    v, n, oi, di = np.unravel_index(int(np.argmax(V)), V.shape)
    if tol is None:  # as darrm.certify.tolerance: 1e-12 relative to e^ε-scaled terms
        tol = DEFAULT_TOL * max(1.0, math.exp(params.target_eps))
    return Certificate(float(V[v, n, oi, di]), (int(v), int(n)), int(oi), DIRECTIONS[di], int(V.shape[0] * V.shape[1]), tol)


# ----------------------------------------------------------------------------- LP rows
def _alpha(others: OthersPmfs, n: int, p: float, K: int) -> np.ndarray:
    """pmf of L = S_i + X (S_i ~ Bern(p)), full length K+1."""
    o, x = others.pmf(n)
    a = np.zeros(K + 1)
    a[o : o + x.size] += (1.0 - p) * x
    a[o + 1 : o + 1 + x.size] += p * x
    return a


def constraint_row(params: DisjointParams, vertex: int, n: int, output: int, direction: int) -> np.ndarray:
    """Folded LP row r (over x = γ(mid..K)) with (r·x − rhs)/2 = the violation of that index."""
    p, pp = params.member.changed_vertices()[vertex]
    a = _alpha(params.others, n, float(p), params.K)
    ap = _alpha(params.others, n, float(pp), params.K)
    if direction == 1:
        a, ap = ap, a
    r = folded_rows(a[None, :], ap[None, :], params.exp_eps)[0]
    return r if output == 1 else -r


def solve_gamma_opt_disjoint(
    params: DisjointParams,
    prior: Prior | None = None,
    *,
    tol: float | None = None,
    add_per_round: int = 256,
    max_rounds: int = 200,
    solver_opts: dict | None = None,
) -> GammaTable:
    """Certified γ_opt for disjoint members by constraint generation over the O(K) rows.

    Each round solves the LP (:func:`darrm.lp.solve_lp`, objective
    :func:`darrm.lp.objective_coefficients`) on the working set, evaluates all
    C·K·4 violations with :func:`violations`, and adds the ``add_per_round`` most
    violated rows; it stops when none exceeds 1e-13.  The result is certified by
    :func:`certify_disjoint` and, if needed, scaled toward 0 (:func:`darrm.lp.repair`:
    the violation is linear in γ and γ = 0 has slack) — no uncertified table is returned.
    """
    prior = IIDPrior() if prior is None else prior
    t0 = time.perf_counter()
    c, _ = objective_coefficients(params.K, prior)
    # Tie-break toward larger γ: for large K the prior's mass underflows to 0 away from
    # its mean, and a degenerate LP would leave those γ(l) arbitrary (and constraint
    # generation slow).  The reported objective is recomputed exactly from the final γ.
    c = c - TIE_BREAK
    nvar = c.shape[0]
    rows: list[np.ndarray] = []
    seen: set[tuple[int, ...]] = set()
    x = np.ones(nvar)
    status, rounds = "optimal", 0
    for rounds in range(1, max_rounds + 1):
        if rows:
            x, status = solve_lp(np.array(rows), params.rhs, c, solver_opts=solver_opts)
        else:
            x = (c < 0).astype(np.float64)  # box-only optimum
        gamma = symmetric_from_upper(np.clip(x, 0.0, 1.0), params.K)
        V = violations(gamma, params)
        flat = V.ravel()
        order = np.argsort(flat)[::-1][: add_per_round * 4]
        new = 0
        for idx in order:
            if flat[idx] <= 1e-13 or new >= add_per_round:
                break
            key = tuple(int(i) for i in np.unravel_index(int(idx), V.shape))
            if key in seen:
                continue
            seen.add(key)
            rows.append(constraint_row(params, *key))
            new += 1
        if new == 0:
            break
    t1 = time.perf_counter()
    gamma = symmetric_from_upper(np.clip(x, 0.0, 1.0), params.K)
    cert = certify_disjoint(gamma, params, tol=tol)
    scale = 1.0
    if cert.violation > 0.0:
        gamma, scale = repair(gamma, params, cert.violation)  # type: ignore[arg-type]  # uses .rhs only
        cert = certify_disjoint(gamma, params, tol=tol)
    if not cert.certified:
        raise CertificationError(
            f"disjoint γ_opt violates ({params.target_eps:g}, {params.target_delta:g})-DP by "
            f"{cert.violation:.3e} > tol {cert.tol:.1e} after repair (vertex, n_high = {cert.worst_counts})"
        )
    t2 = time.perf_counter()
    return GammaTable(
        params=params,  # type: ignore[arg-type]
        gamma=gamma,
        family="opt",
        violation=cert.violation,
        prior=prior.to_dict(),
        objective=expected_signed_error(gamma, prior),
        solver="cvxpy+HiGHS",
        status=status,
        info={
            "method": "disjoint-cutting-planes",
            "lp_rows": len(rows),
            "rounds": rounds,
            "checked": cert.checked,
            "repair_scale": scale,
            "seconds_solve": t1 - t0,
            "seconds_certify": t2 - t1,
        },
    )
