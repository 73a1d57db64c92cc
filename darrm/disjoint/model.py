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
  F (8 vertices for Δ > 0, 4 for Δ = 0; :func:`darrm.privacy.corners.corners`); an unchanged
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
:mod:`darrm.privacy.condition`, whose rigorous test decides the verdict (threshold 0, never scaled by
e^ε).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import expit

from ..privacy.certify import Certificate, validate_tol
from ..privacy.condition import Check, check, violation
from ..solver.rows import folded_rows
from ..privacy.corners import complements, corners
from ..errors import CertificationError, ParameterError, SolveError
from ..gamma import symmetric_from_upper, validate_gamma
from ..solver.gamma_opt import expected_signed_error, objective_coefficients, repair
from ..mechanism import output_weights
from ..numerics.binomial import OthersPmfs, expected_weights, others_pmfs  # noqa: F401  (re-exported)
from ..params import _finite, validate_K
from ..prior import IIDPrior, Prior
from ..solver.status import OPTIMAL, StopReason, status_for
from ..table import GammaTable

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
        """Constants of the rigorous float64 privacy test (:mod:`darrm.privacy.condition`)."""
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


def certify_disjoint(gamma: np.ndarray, params: DisjointParams, *, tol: float | None = None) -> Certificate:
    """Largest DP violation bound of DaRRM_γ for disjoint members over every (vertex, n_high),
    both outputs and both directions; ``worst_counts`` = (vertex index, n_high).  Certified
    iff ≤ 0 (``tol`` may only make it stricter, as in :func:`darrm.privacy.certify.certify`)."""
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


#: Default round limit of :func:`solve_gamma_opt_disjoint` (a round costs O(K) rows and one
#: warm HiGHS re-solve; measured: K = 2001 converges in ≤ ~300 rounds, see docs/disjoint.md).
MAX_ROUNDS = 3000

#: HiGHS options added to :data:`darrm.solver.gamma_opt.HIGHS_DEFAULTS` here: keep matrix entries down to
#: 1e-12 (HiGHS's minimum; default 1e-9).  Randomised-response rows have long binomial
#: tails, and dropping them left LP points ~1e-9 outside the exact rows (K = 1001, 3-RR).
HIGHS_DISJOINT = {"small_matrix_value": 1e-12}

#: Below this largest violation the LP point is re-solved exactly from its basis
#: (:func:`_polished`; dense O(n³), so not in the early rounds).
POLISH_BELOW = 1e-8

#: A (vertex, n_high, output, direction) index whose violation exceeds this becomes a cut.
TOL_CP = 1e-13


def _validate_solve_options(cuts_per_round: int, max_rounds: int, gap_tol: float) -> None:
    """The shared solver's domains (:func:`darrm.solver.cutting_planes.solve_cutting_planes`)."""
    if not (isinstance(gap_tol, (int, float)) and math.isfinite(gap_tol) and gap_tol > 0.0):
        raise ParameterError("gap_tol", f"must be finite and > 0, got {gap_tol!r}")
    if int(cuts_per_round) < 1:
        raise ParameterError("cuts_per_round", f"must be >= 1, got {cuts_per_round!r}")
    if int(max_rounds) < 1:
        raise ParameterError("max_rounds", f"must be >= 1, got {max_rounds!r}")


def _new_cuts(V: np.ndarray, seen: set, top: int, threshold: float) -> list[tuple[int, ...]]:
    """Up to ``top`` indices of V (most violated first) above ``threshold`` not in ``seen``."""
    flat = V.ravel()
    hot = np.flatnonzero(flat > threshold)
    out: list[tuple[int, ...]] = []
    for idx in hot[np.argsort(flat[hot])[::-1]]:
        key = tuple(int(i) for i in np.unravel_index(int(idx), V.shape))
        if key not in seen:
            out.append(key)
            if len(out) >= top:
                break
    return out


def _polished(x: np.ndarray, rows: np.ndarray, rhs: float, c: np.ndarray,
              basis: tuple[np.ndarray, np.ndarray] | None) -> tuple[np.ndarray, np.ndarray]:
    """(x′, y′): the LP's optimal vertex and its row duals recomputed in float64 from its basis.

    HiGHS works to a feasibility tolerance (~1e-10) and ignores matrix entries below
    ``small_matrix_value`` (1e-9): with randomised-response members its point sits
    outside exact rows by ~1e-9, and scaling it back (:func:`darrm.solver.gamma_opt.repair`) costs
    ~|c·x|·2v/rhs, more than ``gap_tol``.  Here the basis's nonbasic rows are solved for
    equality over the basic columns with the exact rows (nonbasic columns at their
    bounds), and the duals from c_B + R_{N,B}ᵀ y_N = 0.  Neither needs to be right: x′ is
    only a candidate, certified like any other point, and y′ only feeds the Lagrangian
    bound, valid for every y ≥ 0 (:func:`darrm.solver.restricted_lp.lagrangian_bound`).
    """
    y = np.zeros(rows.shape[0])
    if basis is None or rows.shape[0] == 0:
        return x, y
    bcol, brow = basis
    act = np.flatnonzero(~brow)
    if act.size != int(bcol.sum()) or act.size == 0:
        return x, y
    xp = np.where(x > 0.5, 1.0, 0.0)  # nonbasic columns sit at a bound
    M = rows[np.ix_(act, bcol)]
    try:
        xp[bcol] = np.linalg.solve(M, rhs - rows[act][:, ~bcol] @ xp[~bcol])
        y[act] = np.linalg.solve(M.T, -c[bcol])
    except np.linalg.LinAlgError:
        return x, np.zeros(rows.shape[0])
    return np.clip(xp, 0.0, 1.0), y


def solve_gamma_opt_disjoint(
    params: DisjointParams,
    prior: Prior | None = None,
    *,
    tol: float | None = None,
    cuts_per_round: int = 256,
    max_rounds: int = MAX_ROUNDS,
    accept_gap: bool = False,
    gap_tol: float = 1e-9,
    lp_backend: str = "highs",
    solver_opts: dict | None = None,
    log: Callable[[str], None] | None = None,
) -> GammaTable:
    """Certified γ_opt for disjoint members by constraint generation over the O(K) rows,
    with a proven optimality gap (the contract of :func:`darrm.solver.gamma_opt.solve_gamma_opt`).

    Each round solves the restricted LP (:mod:`darrm.solver.restricted_lp`, objective
    :func:`darrm.solver.gamma_opt.objective_coefficients` scaled and tie-broken toward larger γ) for its
    point x, and re-solves it warm with the exact objective: the duals give a proven
    **lower bound** LB on the full LP (:func:`darrm.solver.restricted_lp.lagrangian_bound`,
    evaluated on the exact rows).  All C·K·4 violations of x are evaluated exactly
    (:func:`violations`); x scaled by their maximum (:func:`darrm.solver.gamma_opt.repair`) is feasible,
    an **upper bound** UB; the best such point is kept.  The ``cuts_per_round`` most
    violated indices (vertex, n_high, output, direction) not yet in the LP are added.

    Stops (:class:`darrm.solver.status.StopReason`) when x violates nothing by more than
    :data:`TOL_CP` (x is returned), when UB − LB ≤ ``gap_tol`` (the best certified point),
    when every violated index is already a row (only the LP's feasibility tolerance is
    left), or at ``max_rounds``.  The returned table is certified by
    :func:`certify_disjoint` (scaled toward 0 if needed: no uncertified table is
    returned), and its ``info["optimality_gap"]`` = its exact expected error − (A + LB) is
    computed from that final table.  Its status is "optimal" iff that gap ≤ ``gap_tol``
    (:func:`darrm.solver.status.status_for`); otherwise a :class:`~darrm.errors.SolveError`
    is raised unless ``accept_gap``, which returns it with ``converged=False``.

    Args:
        cuts_per_round: most violated indices added per round.
        max_rounds: round limit; at the limit see ``accept_gap``.
        accept_gap: return the best certified table with its stated gap instead of raising.
        gap_tol: target proven gap, expected-error units.
        lp_backend: "highs" (incremental warm-started highspy model) or "cvxpy".
        log: callable receiving one line per round.
    """
    from ..solver.restricted_lp import lagrangian_bound, make_restricted_lp

    _validate_solve_options(cuts_per_round, max_rounds, gap_tol)
    prior = IIDPrior() if prior is None else prior
    t0 = time.perf_counter()
    K, rhs = params.K, params.rhs
    c, A = objective_coefficients(K, prior)
    scale = float(np.max(np.abs(c))) or 1.0
    # Tie-break toward larger γ: for large K the prior's mass underflows to 0 away from
    # its mean, and a degenerate LP would leave those γ(l) arbitrary (and constraint
    # generation slow).  Bounds and objectives are evaluated with the exact c.
    c_lp = c / scale - TIE_BREAK
    lp = make_restricted_lp(lp_backend, c_lp, rhs, {**HIGHS_DISJOINT, **(solver_opts or {})})
    seen: set[tuple[int, ...]] = set()
    lb, ub = -math.inf, math.inf
    x_best: np.ndarray | None = None
    stop = StopReason.ROUND_LIMIT
    rnd = 0
    for rnd in range(1, int(max_rounds) + 1):
        x, _ = lp.solve()
        x = np.clip(x, 0.0, 1.0)
        V = violations(symmetric_from_upper(x, K), params)
        v = float(V.max())
        polish = TOL_CP < v <= POLISH_BELOW  # only the LP's own tolerance is left to remove
        basis_x = lp.basis() if polish else None
        # the same rows, exact objective, warm start: the tightest bound these rows allow
        lp.set_objective(c / scale)
        x_ex, y = lp.solve()
        lp.set_objective(c_lp)
        lb = max(lb, lagrangian_bound(c, lp.rows, rhs, scale * y))
        if polish:
            y_p = _polished(np.clip(x_ex, 0.0, 1.0), lp.rows, rhs, c, lp.basis())[1]
            lb = max(lb, lagrangian_bound(c, lp.rows, rhs, y_p))
        x_f = repair(x, params, v)[0] if v > 0.0 else x  # type: ignore[arg-type]  # uses .rhs only
        if x_best is None or float(c @ x_f) < ub:
            x_best, ub = x_f, float(c @ x_f)
        if polish and ub - lb > gap_tol:
            # the LP's vertex recomputed exactly from its basis: a second certified candidate
            x_p = _polished(x, lp.rows, rhs, c, basis_x)[0]
            v_p = float(violations(symmetric_from_upper(x_p, K), params).max())
            x_pf = repair(x_p, params, v_p)[0] if v_p > 0.0 else x_p  # type: ignore[arg-type]
            if float(c @ x_pf) < ub:
                x_best, ub = x_pf, float(c @ x_pf)
        if log:
            log(f"round {rnd}: {lp.rows.shape[0]} LP rows, max violation {v:.3e}, gap ≤ {ub - lb:.3e}")
        if v <= TOL_CP:
            x_best, ub, stop = x_f, float(c @ x_f), StopReason.NO_VIOLATION
            break
        if ub - lb <= gap_tol:
            stop = StopReason.GAP
            break
        new = _new_cuts(V, seen, int(cuts_per_round), TOL_CP)
        if not new:
            stop = StopReason.LP_TOLERANCE
            break
        if rnd == max_rounds:
            break
        seen.update(new)
        lp.add(np.array([constraint_row(params, *key) for key in new]))
    t1 = time.perf_counter()
    assert x_best is not None
    gamma = symmetric_from_upper(np.clip(x_best, 0.0, 1.0), K)
    cert = certify_disjoint(gamma, params, tol=tol)
    factor = 1.0
    if cert.violation > 0.0:
        gamma, factor = repair(gamma, params, cert.violation)  # type: ignore[arg-type]
        cert = certify_disjoint(gamma, params, tol=tol)
    if not cert.certified:
        raise CertificationError(
            f"disjoint γ_opt violates ({params.target_eps:g}, {params.target_delta:g})-DP by "
            f"{cert.violation:.3e} > tol {cert.tol:.1e} after repair (vertex, n_high = {cert.worst_counts})"
        )
    t2 = time.perf_counter()
    objective = expected_signed_error(gamma, prior)
    gap = max(0.0, objective - (A + lb))  # from the final certified table, not from UB
    status = status_for(gap, gap_tol)
    converged = status == OPTIMAL
    if not converged and not accept_gap:
        why = f"in {rnd} rounds" if stop is StopReason.ROUND_LIMIT else f"(stopped: {stop.value})"
        raise SolveError(
            f"disjoint γ_opt not proven optimal {why}: optimality gap {gap:.3e} > gap_tol {gap_tol:.1e}; "
            "raise max_rounds, or accept_gap=True for a certified table with a stated optimality gap"
        )
    return GammaTable(
        params=params,  # type: ignore[arg-type]
        gamma=gamma,
        family="opt",
        violation=cert.violation,
        prior=prior.to_dict(),
        objective=objective,
        solver="HiGHS (highspy, incremental)" if lp_backend == "highs" else "cvxpy+HiGHS",
        status=status,
        info={
            "method": "disjoint-cutting-planes",
            "stop": stop.value,
            "converged": converged,
            "rounds": rnd,
            "optimality_gap": gap,
            "lp_lower_bound": lb,
            "gap_tol": gap_tol,
            "lp_rows": int(lp.rows.shape[0]),
            "checked": cert.checked,
            "repair_scale": factor,
            "lp_backend": lp_backend,
            "seconds_solve": t1 - t0,
            "seconds_certify": t2 - t1,
        },
    )
