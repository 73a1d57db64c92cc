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

Rigorous float64: the pmf of X is built from binomial pmfs by the non-negative recurrence
Bin(n) = (1−p, p) ⊛ Bin(n−1) (:func:`binomial_windows`, with the ends' complements given in
closed form: hi = 1 − lo), trimmed to windows, and convolved directly (non-negative terms, no
FFT); a bound τ_n (≤ ~1e-26) on the mass the windows leave out is *added* to every violation,
so truncation can only make the certificate stricter.  Pr[A = 0] uses the reversed weights
(never 1 − Pr[A = 1]) and the changed member's vertices come with closed-form complements, so
every probability is a sum of non-negative terms within the relative bound ρ(K) of
:mod:`darrm.condition`, whose rigorous test decides the verdict (threshold 0, never scaled by
e^ε).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import expit

from .certify import Certificate, validate_tol
from .condition import Check, check, violation
from .constraints import folded_rows
from .corners import complements, corners
from .errors import CertificationError, ParameterError
from .gamma import symmetric_from_upper, validate_gamma
from .lp import expected_signed_error, objective_coefficients, repair, solve_lp
from .mechanism import output_weights
from .params import _finite, validate_K
from .prior import IIDPrior, Prior
from .table import GammaTable

#: Binomial pmf entries below this are trimmed from the windows (their mass is accounted for).
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

    def changed_complements(self) -> np.ndarray:  # pragma: no cover - interface
        """(1 − p_i, 1 − p′_i) of :meth:`changed_vertices`, in closed form (no cancellation)."""
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

    def changed_complements(self) -> np.ndarray:
        return 1.0 - self.changed_vertices()  # exact for 0 and 1

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

    def changed_complements(self) -> np.ndarray:
        return complements(self.eps, self.Delta)

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

    def changed_complements(self) -> np.ndarray:
        r, s = self.flip, float(expit(self.eps0))  # 1 − r = s
        return np.array([(s, s), (r, r), (r, s), (s, r)])

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
    def check(self) -> Check:
        """Constants of the rigorous float64 privacy test (:mod:`darrm.condition`)."""
        return check(self.target_eps, self.target_delta, self.K)

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


def binomial_windows(N: int, p: float, q: float, cutoff: float = PMF_CUTOFF) -> tuple[np.ndarray, list, np.ndarray]:
    """Bin(n, p) for n = 0..N on windows: (offsets, pmfs, bounds on the mass left out).

    The recurrence Bin(n) = q·Bin(n−1) + p·shift(Bin(n−1)) (q = 1 − p given in closed form)
    runs on the window of n−1; entries below ``cutoff`` at either end are trimmed (binomial
    pmfs are unimodal, so the window stays contiguous).  Every kept entry is a sum of products
    of non-negative numbers (relative error ≤ 2n·u plus n times that of p and q) and never
    exceeds the exact value by more than that; the mass left out is bounded by twice the
    running float sum of what was trimmed (convolving with a probability vector preserves
    mass, so earlier losses carry over, never grow).
    """
    offs = np.zeros(N + 1, dtype=np.int64)
    lost = np.zeros(N + 1)
    rows = [np.ones(1)]
    cur, off, gone = rows[0], 0, 0.0
    for n in range(1, N + 1):
        nxt = np.zeros(cur.size + 1)
        nxt[:-1] = q * cur
        nxt[1:] += p * cur
        keep = np.flatnonzero(nxt >= cutoff)
        i, j = int(keep[0]), int(keep[-1]) + 1
        gone += float(nxt[:i].sum() + nxt[j:].sum())
        cur, off = nxt[i:j], off + i
        rows.append(cur)
        offs[n], lost[n] = off, 2.0 * gone
    return offs, rows, lost


def others_pmfs(N: int, lo: float, hi: float, cutoff: float = PMF_CUTOFF) -> OthersPmfs:
    """Laws of the unchanged members' vote count for every number n ∈ {0..N} of them at ``hi``.

    ``lo`` and ``hi`` are complements (hi = 1 − lo: every member model's ends are), so each
    serves as the other's 1 − p in the recurrence of :func:`binomial_windows`."""
    if not (0.0 <= lo <= hi <= 1.0 and abs((lo + hi) - 1.0) <= 4 * 2.0**-53):
        raise ParameterError("ends", f"must be complementary probabilities lo <= hi = 1 - lo, got ({lo!r}, {hi!r})")
    off_h, win_h, lost_h = binomial_windows(N, hi, lo, cutoff)
    off_l, win_l, lost_l = binomial_windows(N, lo, hi, cutoff)
    pos, vals, starts, drop = [], [], np.zeros(N + 1, dtype=np.int64), np.zeros(N + 1)
    size = 0
    for n in range(N + 1):
        x = np.convolve(win_h[n], win_l[N - n])
        a = int(off_h[n] + off_l[N - n])
        starts[n] = size
        size += x.size
        pos.append(np.arange(a, a + x.size))
        vals.append(x)
        drop[n] = lost_h[n] + lost_l[N - n]
    return OthersPmfs(N, np.concatenate(pos), np.concatenate(vals), starts, drop)


def expected_weights(others: OthersPmfs, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(E[w_X], E[w_{X+1}]) for every n: arrays of length N+1 (w has length N+2 = K+1)."""
    a = np.add.reduceat(others.values * w[others.pos], others.starts)
    b = np.add.reduceat(others.values * w[others.pos + 1], others.starts)
    return a, b


def violations(gamma: np.ndarray, params: DisjointParams) -> np.ndarray:
    """Rigorous bounds v̂ on Pr[A(X)=o] − e^ε Pr[A(X′)=o] − δ (+ mass left out) of DaRRM_γ.

    Shape (C, K, 2, 2): changed-member vertex, n_high, output o, direction (D,D′ / D′,D).
    Computed from the output probabilities themselves (Algorithm 1), not from LP rows:
    Pr[A = 1] with w, Pr[A = 0] with w reversed (γ symmetric), the changed member's law with
    closed-form complements; v̂ ≤ 0 proves the exact violation ≤ 0 (:mod:`darrm.condition`).
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


def certify_disjoint(gamma: np.ndarray, params: DisjointParams, *, tol: float | None = None) -> Certificate:
    """Largest DP violation bound of DaRRM_γ for disjoint members over every (vertex, n_high),
    both outputs and both directions; ``worst_counts`` = (vertex index, n_high).  Certified
    iff ≤ 0 (``tol`` may only make it stricter, as in :func:`darrm.certify.certify`)."""
    t = validate_tol(tol)
    V = violations(gamma, params)
    v, n, oi, di = np.unravel_index(int(np.argmax(V)), V.shape)
    return Certificate(float(V[v, n, oi, di]), (int(v), int(n)), int(oi), DIRECTIONS[di],
                       int(V.shape[0] * V.shape[1]), t, params.check.rho)


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
