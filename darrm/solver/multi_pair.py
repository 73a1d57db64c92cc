"""The γ LP under a list of (ε′_k, δ′_k) privacy-profile bounds instead of one (mε, δ) pair.

**Claim.**  For a symmetric γ and any ε′ ≥ 0, δ′ ≥ 0, DaRRM_γ satisfies δ_γ(ε′) ≤ δ′ (its privacy
profile, the largest hockey-stick divergence e^{ε′} over neighbouring datasets) iff every corner
multiset v satisfies the folded row of Lemma 3.4 (Eq. 1) with (mε, δ) replaced by (ε′, δ′):

    r_v(e^{ε′})·x ≤ e^{ε′} − 1 + 2δ′,   x = γ(mid..K)              (:func:`darrm.privacy.condition.folded_rows`).

*Proof.*  Lemma 3.4's derivation of Eq. 1 only uses that the output is binary and γ symmetric, at
whatever ε it is written for; Lemma 5.1 reduces the supremum over the members' (ε, Δ) regions to
corner multisets because Pr[A(D)=o] − e^{ε′}·Pr[A(D′)=o] is affine in each member's (p_i, p′_i),
for every ε′ (the members' corners depend on (ε, Δ), never on the target).  So the corner
multisets, and their pmf pairs (α, α′), are the same for every pair; only e^{ε′} and the right-hand
side change.  ∎

So bounding the profile at K grid points is a linear program with one family of rows per pair.  Each
row is divided by its right-hand side (> 0 whenever ε′ > 0 or δ′ > 0), so the restricted LP of
:mod:`darrm.solver.restricted_lp` (one scalar right-hand side) serves unchanged; with ONE pair nothing
is divided and the rows and LP are exactly today's (:func:`darrm.solver.full_lp.build_rows`,
bit for bit, tested).

Constraint generation (:func:`solve_pairs`) keeps the corner multisets' pmf pairs in memory (the
vote-count pmfs do not depend on the pair), evaluates every pair's rows at the current point as
A·x + e^{ε′_k}·B·x, adds the most violated rows — each cut carries its pair index — and stops when
no row of any pair is violated by more than ``feas_tol`` (relative to its right-hand side).  The LP
point is not itself a privacy claim: the caller certifies the table it becomes
(:mod:`darrm.budget.design` by the exact composition of its own profile).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError, SolveError
from ..privacy.condition import folded_rows, rhs
from ..privacy.corners import corner_count, corners, iter_count_vector_blocks, multiset_count
from .engine import run_rounds
from .full_lp import solve_all_rows
from .restricted_lp import make_restricted_lp
from .rows import pmf_pairs, possibly_binding

#: most corner multisets :func:`solve_pairs` keeps in memory (two (N, K+1) float64 pmf arrays)
ENUMERATION_LIMIT = 400_000


@dataclass(frozen=True)
class ProfilePair:
    """One bound δ_γ(eps) ≤ delta on the privacy profile of one query.

    Attributes:
        eps: ε′ ≥ 0.
        delta: δ′ ∈ [0, 1]; eps = delta = 0 is refused (the row's right-hand side would be 0).
    """

    eps: float
    delta: float

    def __post_init__(self) -> None:
        e, d = float(self.eps), float(self.delta)
        if not (math.isfinite(e) and 0.0 <= e <= 700.0):
            raise ParameterError("eps", f"must lie in [0, 700], got {self.eps!r}")
        if not (math.isfinite(d) and 0.0 <= d <= 1.0):
            raise ParameterError("delta", f"must lie in [0, 1], got {self.delta!r}")
        if e == 0.0 and d == 0.0:
            raise ParameterError("delta", "must be > 0 when eps = 0 (δ_γ(0) ≤ 0 allows only γ ≡ 0)")
        object.__setattr__(self, "eps", e)
        object.__setattr__(self, "delta", d)

    @property
    def rhs(self) -> float:
        """e^{ε′} − 1 + 2δ′ (Eq. 1 at this pair)."""
        return rhs(self.eps, self.delta)


def as_pairs(pairs: Sequence[ProfilePair] | Sequence[tuple[float, float]]) -> tuple[ProfilePair, ...]:
    """A non-empty tuple of :class:`ProfilePair` from pairs or (ε′, δ′) tuples.

    Raises:
        ParameterError: empty, or a bad pair."""
    out = tuple(p if isinstance(p, ProfilePair) else ProfilePair(*p) for p in pairs)
    if not out:
        raise ParameterError("pairs", "need at least one (eps, delta) pair")
    return out


def iter_pair_row_blocks(K: int, eps: float, member_delta: float, pairs: Sequence[ProfilePair],
                         block: int = 1 << 15) -> Iterator[tuple[np.ndarray, list[np.ndarray]]]:
    """Yield (count vectors, [folded rows of pair k for k in order]) over all corner multisets;
    the pmf pairs of a block are computed once for every pair."""
    cs = corners(eps, member_delta)
    for counts in iter_count_vector_blocks(K, cs.shape[0], block):
        a, ap = pmf_pairs(counts, cs)
        yield counts, [folded_rows(a, ap, math.exp(p.eps)) for p in pairs]


def build_pair_rows(K: int, eps: float, member_delta: float, pairs: Sequence[ProfilePair], *,
                    prune: bool = True, block: int = 1 << 15) -> tuple[np.ndarray, np.ndarray, float]:
    """Every (possibly binding) row of every pair: (rows, pair index of each row, right-hand side).

    One pair: the rows of :func:`darrm.solver.full_lp.build_rows` bit for bit and that pair's
    right-hand side.  Several: each row divided by its pair's right-hand side, and 1.0."""
    pairs = as_pairs(pairs)
    one = len(pairs) == 1
    keep: list[np.ndarray] = []
    index: list[np.ndarray] = []
    for _, per_pair in iter_pair_row_blocks(K, eps, member_delta, pairs, block):
        for k, (p, rows) in enumerate(zip(pairs, per_pair, strict=True)):
            r = rows[possibly_binding(rows, p.rhs)] if prune else rows
            keep.append(r if one else r / p.rhs)
            index.append(np.full(r.shape[0], k, dtype=np.int64))
    n = (K + 1) // 2
    rows = np.concatenate(keep, axis=0) if keep else np.zeros((0, n))
    idx = np.concatenate(index) if index else np.zeros(0, dtype=np.int64)
    return rows, idx, (pairs[0].rhs if one else 1.0)


def solve_pairs_full(K: int, eps: float, member_delta: float, pairs: Sequence[ProfilePair], c: np.ndarray,
                     solver_opts: dict | None = None) -> np.ndarray:
    """min c·x subject to every pair's rows, 0 ≤ x ≤ 1, all rows at once (cvxpy + HiGHS, as the
    full LP of :func:`darrm.solver.gamma_opt.solve_gamma_opt`: one pair gives its x exactly).

    Raises:
        SolveError: the LP failed."""
    rows, _, r = build_pair_rows(K, eps, member_delta, pairs)
    return solve_all_rows(rows, r, c, solver_opts=solver_opts)[0]


@dataclass(frozen=True)
class PairCut:
    """A constraint-generation cut: the multiset's index in the enumeration and its pair."""

    multiset: int
    pair: int


class _PairRounds:
    """One run of :func:`solve_pairs` (a :class:`darrm.solver.engine.Rounds`): plain Kelley cuts from the
    box optimum; the oracle evaluates every pair's rows at the LP point as A·x + e^{ε′_k}·B·x."""

    def __init__(self, pmfs: tuple[np.ndarray, np.ndarray], pairs: tuple[ProfilePair, ...], c: np.ndarray, *,
                 cuts_per_round: int, max_rounds: int, feas_tol: float, lp_backend: str):
        self.a, self.ap = pmfs
        K = self.a.shape[1] - 1
        mid = (K + 1) // 2
        lo = K + 1 - mid
        # row_k·x = A·x + e_k·B·x (folded_rows regrouped; cuts themselves are built by folded_rows)
        self.A = self.a[:, mid:] - self.a[:, :lo][:, ::-1]
        self.B = self.ap[:, :lo][:, ::-1] - self.ap[:, mid:]
        self.e = np.array([math.exp(p.eps) for p in pairs])
        self.r = np.array([p.rhs for p in pairs])
        self.cuts_per_round, self.max_rounds, self.feas_tol = cuts_per_round, max_rounds, feas_tol
        self.lp = make_restricted_lp(lp_backend, c, 1.0)
        self.x = np.clip(self.lp.solve()[0], 0.0, 1.0)  # the box optimum: the rows come as cuts
        self.cuts: list[PairCut] = []
        self.seen: set[tuple[int, int]] = set()
        self.worst = math.inf

    def result(self, rounds: int) -> tuple[np.ndarray, dict]:
        return self.x, {"rounds": rounds, "lp_rows": len(self.cuts), "max_violation": self.worst,
                        "cuts": [(q.multiset, q.pair) for q in self.cuts]}

    def separate(self) -> list[np.ndarray]:
        """The rows of the most violated (multiset, pair) cuts at x not yet in the LP, most violated first
        (sets :attr:`worst`, the largest relative violation of any row)."""
        x, e, r = self.x, self.e, self.r
        viol = ((self.A @ x)[:, None] + (self.B @ x)[:, None] * e[None, :] - r[None, :]) / r[None, :]
        self.worst = float(viol.max())
        if self.worst <= self.feas_tol:
            return []
        flat = viol.ravel()
        take = min(self.cuts_per_round, flat.size)
        top = np.argpartition(-flat, take - 1)[:take]
        new = []
        for f in top[np.argsort(-flat[top])]:
            if flat[f] <= self.feas_tol:
                break
            i, k = divmod(int(f), e.size)
            if (i, k) in self.seen:  # re-violated only by LP tolerance: the point is as good as it gets
                continue
            self.seen.add((i, k))
            self.cuts.append(PairCut(i, k))
            new.append(folded_rows(self.a[i : i + 1], self.ap[i : i + 1], float(e[k]))[0] / r[k])
        return new

    def round(self, rnd: int) -> tuple[np.ndarray, dict] | None:
        new = self.separate()
        if self.worst <= self.feas_tol:
            return self.result(rnd - 1)
        if not new:
            return self.result(rnd)
        self.lp.add(np.array(new))
        x, _ = self.lp.solve()
        self.x = np.clip(x, 0.0, 1.0)
        return None

    def at_limit(self) -> tuple[np.ndarray, dict]:
        raise SolveError(f"profile-bounded LP: {self.max_rounds} rounds without convergence "
                         f"(largest relative row violation {self.worst:.3e})")


def solve_pairs(K: int, eps: float, member_delta: float, pairs: Sequence[ProfilePair], c: np.ndarray, *,
                cuts_per_round: int = 64, max_rounds: int = 500, feas_tol: float = 1e-10,
                lp_backend: str = "highs") -> tuple[np.ndarray, dict]:
    """Constraint generation over every corner multiset and every pair (module docstring), driven by the
    engine's loop (:func:`darrm.solver.engine.run_rounds`).

    Args:
        K, eps, member_delta: the members (K odd, each (ε, Δ)-DP).
        pairs: the profile bounds.
        c: LP costs over x = γ(mid..K) (:func:`darrm.solver.objective.objective_coefficients`).
        cuts_per_round: most-violated rows added per round (over all pairs).
        max_rounds: round limit.
        feas_tol: stop when no row exceeds its right-hand side by more than feas_tol·rhs.

    Returns:
        (x, info): info has "rounds", "lp_rows", "cuts" (list of (multiset, pair) indices) and
        "max_violation" (relative, at the returned x).

    Raises:
        ParameterError: too many multisets to enumerate (> :data:`ENUMERATION_LIMIT`).
        SolveError: the LP failed or the round limit was reached with a violated row.
    """
    pairs = as_pairs(pairs)
    C = corner_count(member_delta)
    N = multiset_count(K, C)
    if N > ENUMERATION_LIMIT:
        raise ParameterError("K", f"{N} corner multisets exceed the {ENUMERATION_LIMIT} this solver enumerates "
                                  "(a total-budget γ is designed at small and moderate K)")
    cs = corners(eps, member_delta)
    blocks = [pmf_pairs(counts, cs) for counts in iter_count_vector_blocks(K, C, 1 << 15)]
    pmfs = (np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks]))
    return run_rounds(_PairRounds(pmfs, pairs, c, cuts_per_round=cuts_per_round, max_rounds=max_rounds,
                                  feas_tol=feas_tol, lp_backend=lp_backend))
