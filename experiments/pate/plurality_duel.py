"""C classes: a noisy top-two selection followed by a DaRRM duel, designed for a TOTAL budget.

The plurality aggregator of :mod:`.plurality_top_two` releases the plurality with probability γ(t, s),
else a uniform class.  Its family does not contain GNMax: at a tie of the top two it must release
1/C per class, so from there the plurality's probability has to climb from 1/C (GNMax starts at 1/2),
and any release that names a runner-up by its count is discontinuous where a third class reaches the
runner-up's count.  This module's family contains GNMax exactly and keeps an exact certificate.

Mechanism M_{σ1, h}.  For a vote histogram n ∈ ℕ^C of K teachers (Σ n = K):

1. (c1, c2) = the classes of the largest and the second largest entry of n + Z, Z ~ N(0, σ1² I_C)
   (ties have probability 0);
2. m = n_{c1} − n_{c2} ∈ {−K, …, K}; release c1 with probability h(m), else c2.

GNMax with noise σ is M_{σ, h ≡ 1} (argmax of n + Z); the binary GNMax duel between the noisy top
two, h(m) = Φ(m μ2 / 2), is another member.  h is the DaRRM step: a data-dependent randomised
response between two candidates, designed by a linear program.

Claim 1 (stage 1).  (c1, c2) is a function of n + Z: post-processing of the Gaussian mechanism on n,
whose ℓ2 sensitivity under a move of one vote (n − e_a + e_b) is √2.  So stage 1 is μ1-GDP with
μ1 = √2/σ1 (Dong, Roth & Su 2022, Theorem 2.7).

Claim 2 (stage 2's pairs).  Fix (c1, c2).  A move changes n_{c1} and n_{c2} by at most one each, in
opposite directions when both change, so m changes by k ∈ {−2, …, 2}.  Stage 2's output law at m is
(h(m), 1 − h(m)) on {c1, c2}; the pairs of laws one move apart are among (m, m + 1) and (m, m + 2),
−K ≤ m < m + k ≤ K, in both directions (:func:`duel_pairs`; every such pair is realised by some
histogram and move when C ≥ 3, so the list is exact).  Its cloud of points (x, y) = (P′(S), P(S)) over
both outputs S and both directions (:func:`duel_cloud`) bounds the hockey-stick divergence at every
ε′ (:mod:`darrm.privacy.profile`, Claim 1: a binary output's events are the outputs themselves).
:func:`darrm.budget.targets.certified_gdp_mu` then gives the smallest μ2 (rounded up, checked in
mpmath) with y ≤ Φ(Φ⁻¹(x) + μ2) at every point: stage 2, for every fixed (c1, c2), is μ2-GDP.

Claim 3 (one query, Q queries).  A query releases (c1, c2) and then the duel's answer; releasing more
only costs more, so bounding that pair bounds the label.  Given stage 1's output, stage 2 is μ2-GDP
(Claim 2, uniformly in (c1, c2)), so the query is the adaptive composition of a μ1-GDP and a μ2-GDP
mechanism: √(μ1² + μ2²)-GDP (Dong, Roth & Su 2022, Corollary 3.3, adaptive).  The teachers are fixed
non-private models on disjoint shards, so one training record moves at most one vote of every
query's histogram; each query draws fresh noise, so Q adaptively chosen queries are
√Q·√(μ1² + μ2²)-GDP, and their ε at δ_total is :func:`darrm.budget.targets.gdp_epsilon` (the exact
Gaussian trade-off, evaluated in mpmath, rounded up).  GNMax calibrated by the exact composition of Q
Gaussian mechanisms is the special case μ2 = 0.

Design (:func:`design_duel`).  μ = the per-query GDP parameter whose Q-fold composition is the total
(:func:`darrm.budget.targets.gdp_mu_for_total`).  Candidates: GNMax (μ1 = μ, h ≡ 1), and for each split
ρ of :data:`SPLITS` the Gaussian duel and the LP duel at the stage-2 target μ2 = √(1 − ρ)·μ; the
LP maximises Pr[release = truth] under a multinomial prior with stage-1 noise at μ1 = √ρ·μ, subject
to the target's tangent rows y − e^{ε′}x ≤ δ_{μ2}(ε′) on a grid of ε′ (an outer approximation: it
never carries the privacy claim).  Every candidate is charged
its CERTIFIED μ2* (Claim 2) and gets the rest of the budget, μ1 = √(μ² − μ2*²); the best candidate
under the prior wins.  GNMax is a candidate, evaluated on the same Monte-Carlo draws (common random
numbers), so the design is never worse than GNMax at equal total under the design's prior.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from darrm.budget.spec import TotalBudget
from darrm.budget.targets import certified_gdp_mu, gdp_delta, gdp_epsilon, gdp_mu_for_total
from darrm.errors import CertificationError, ParameterError, SolveError
from darrm.mechanism import class_votes
from darrm.validation import count, generator, instance, open_unit, positive

from .multiclass_aggregators import histograms_of

__all__ = ["ACCOUNTANT", "SPLITS", "DuelCandidate", "DuelDesign", "certified_duel_mu", "design_duel",
           "duel_cloud", "duel_pairs", "release_duel", "solve_duel"]

#: stage-1 shares ρ = μ1²/μ² tried by the design (GNMax is ρ = 1)
SPLITS = (0.95, 0.9, 0.8, 0.65, 0.5)
#: the LP's grid: ε′ ∈ (0, GRID_SPAN·μ2] at GRID − 1 points (refining it at the violated tangent points
#: moved the certified μ2 by < 1e-4 relative at K = 250 for 8× the time, so it is not refined)
GRID, GRID_SPAN = 33, 8.0
#: the LP keeps h in [H_FLOOR, 1 − H_FLOOR], H_FLOOR = Φ(−GRID_SPAN/2) ≈ 3.2e-5 (:func:`solve_duel`)
H_FLOOR = 0.5 * math.erfc(GRID_SPAN / 2.0 / math.sqrt(2.0))
#: Monte-Carlo draws of the design's prior objective
SAMPLES = 100_000
#: the accountant named in records
ACCOUNTANT = ("exact GDP: stage 1 Gaussian (sqrt(2)/sigma1) composed with stage 2's certified GDP mu "
              "(vertex certificate, mpmath), sqrt(Q)*sqrt(mu1^2 + mu2^2)-GDP, epsilon at delta_total in mpmath")


def duel_pairs(K: int) -> np.ndarray:
    """Stage 2's pairs of margins one move apart (Claim 2), as indices i = m + K into h.

    Args:
        K: number of teachers.

    Returns:
        ``(n, 2)`` int array of (i, j), j − i ∈ {1, 2}, both in 0..2K (each pair once; the cloud
        takes both directions).

    Raises:
        ParameterError: ``K`` is not a count.
    """
    K = count("K", K)
    i = np.arange(2 * K + 1)
    one = np.stack([i[:-1], i[1:]], axis=1)
    two = np.stack([i[:-2], i[2:]], axis=1)
    return np.concatenate([one, two])


def duel_cloud(h: np.ndarray, K: int) -> tuple[np.ndarray, np.ndarray]:
    """Stage 2's cloud (Claim 2): (x, y) = (P′(S), P(S)) for every pair of :func:`duel_pairs`, both
    directions and both outputs S ∈ {c1, c2}, rounded outward: the h values are the stored ones
    (exact), and 1 − h is computed exactly (fractions) and rounded down where it is an x, up where
    it is a y.

    Args:
        h: h(m) over m = −K..K (length 2K + 1), in [0, 1].
        K: number of teachers.

    Returns:
        (x, y) arrays.

    Raises:
        ParameterError: ``h`` is not a length-(2K + 1) array of values in [0, 1].
    """
    g = _check_h(h, K)
    down, up = _complement(g)
    p = duel_pairs(K)
    i, j = p[:, 0], p[:, 1]
    y = np.concatenate([g[i], g[j], up[i], up[j]])
    x = np.concatenate([g[j], g[i], down[j], down[i]])
    return x, y


def _complement(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(1 − g rounded down, 1 − g rounded up), from the exact rational 1 − g."""
    from fractions import Fraction

    down, up = np.empty_like(g), np.empty_like(g)
    for k, v in enumerate(g.tolist()):
        c = 1 - Fraction(v)
        f = float(c)
        down[k] = f if Fraction(f) <= c else np.nextafter(f, 0.0)
        up[k] = f if Fraction(f) >= c else np.nextafter(f, 1.0)
    return down, up


def certified_duel_mu(h: np.ndarray, K: int) -> float:
    """The certified GDP parameter μ2 of stage 2 (Claim 2): :func:`darrm.budget.targets.certified_gdp_mu`
    on :func:`duel_cloud` (every vertex checked in mpmath; 0 for a constant h, inf for a jump to 0 or 1).

    Args:
        h: h(m) over m = −K..K.
        K: number of teachers.

    Returns:
        μ2 ≥ 0, or inf.

    Raises:
        ParameterError: a bad ``h`` or ``K``.
    """
    x, y = duel_cloud(h, K)
    return certified_gdp_mu(x, y)


def _check_h(h: object, K: int) -> np.ndarray:
    K = count("K", K)
    g = np.asarray(h, dtype=np.float64)
    if g.shape != (2 * K + 1,) or not np.all(np.isfinite(g)) or np.any(g < 0.0) or np.any(g > 1.0):
        raise ParameterError("h", f"must be {2 * K + 1} values in [0, 1] (m = -K..K), got shape {g.shape}")
    return g


@dataclass(frozen=True)
class _Draws:
    """Prior histograms and standard normal stage-1 noise (common random numbers)."""

    hist: np.ndarray  # (N, C), the true class is 0
    noise: np.ndarray  # (N, C), N(0, 1)


def _draws(K: int, C: int, p_correct: float, samples: int, seed: int) -> _Draws:
    rng = np.random.default_rng([seed, 28])
    probs = np.full(C, (1.0 - p_correct) / (C - 1))
    probs[0] = p_correct
    return _Draws(rng.multinomial(K, probs, size=samples), rng.standard_normal((samples, C)))


def _stage_one(noisy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(c1, c2): the classes of the largest and second largest noisy count, per row."""
    top2 = np.argpartition(-noisy, 1, axis=1)[:, :2]
    first = np.take_along_axis(noisy, top2, axis=1)
    swap = first[:, 1] > first[:, 0]
    c1 = np.where(swap, top2[:, 1], top2[:, 0])
    c2 = np.where(swap, top2[:, 0], top2[:, 1])
    return c1, c2


def _weights(K: int, C: int, sigma1: float, draws: _Draws) -> tuple[float, np.ndarray, float]:
    """(base, w, gnmax): Pr[release = truth] = base + w·h under the draws, and GNMax's Pr[c1 = truth].

    Args:
        K: teachers.
        C: classes.
        sigma1: stage 1's noise.
        draws: the prior's histograms and standard normal noise.

    Returns:
        ``base`` = Pr[c2 = truth], ``w[m + K]`` = E[1{m, c1 = truth} − 1{m, c2 = truth}], and
        Pr[c1 = truth] (GNMax's agreement with the truth at this σ).
    """
    c1, c2 = _stage_one(draws.hist + positive("sigma1", sigma1) * draws.noise)
    rows = np.arange(len(c1))
    m = draws.hist[rows, c1] - draws.hist[rows, c2] + K
    r1, r2 = (c1 == 0).astype(np.float64), (c2 == 0).astype(np.float64)
    w = np.bincount(m, weights=r1 - r2, minlength=2 * K + 1) / len(c1)
    return float(r2.mean()), w, float(r1.mean())


def solve_duel(K: int, mu2: float, w: np.ndarray) -> np.ndarray:
    """h maximising w·h subject to stage 2 being (approximately) μ2-GDP: the rows
    y − e^{ε′}·x ≤ δ_{μ2}(ε′) (tangents of the Gaussian trade-off curve) for every pair, direction and
    output, at the grid of :data:`GRID` points (module docstring: an outer approximation, certified
    afterwards by :func:`certified_duel_mu`, whose μ2 is what is charged).

    Args:
        K: teachers.
        mu2: the stage-2 target μ2 > 0.
        w: the objective (length 2K + 1).

    h is bounded to [η, 1 − η], η = :data:`H_FLOOR` = Φ(−GRID_SPAN/2).  Without the bound the LP may put
    a tiny mass against a zero (h(m) = 0 < h(m′) one move away, or 1 − h likewise): a point x = 0 < y of
    the cloud, an infinite privacy loss that no grid of ε′ excludes, so its certified μ2 would be ∞.  With it,
    every point of the cloud has x ≥ η > 0 (the complements 1 − h are rounded down from ≥ η, and η is
    far above the rounding), so the certificate's μ2 is finite; and the grid's tangent rows touch the
    Gaussian trade-off curve at x = Φ(−ε′/μ2 − μ2/2) down to Φ(−GRID_SPAN) ≪ η, so the tail points the
    bound leaves are ones the grid constrains.  The bound changes no claim: the certificate is computed
    afterwards on the returned h, as before.  Against an unbounded h it costs at most η of agreement
    per query (|w|₁ ≤ 1 under the prior's draws, and h moves by at most η).

    Returns:
        h over m = −K..K, in [η, 1 − η].

    Raises:
        ParameterError: a bad ``mu2`` or ``w``.
        SolveError: HiGHS did not solve the LP.
    """
    from scipy.optimize import linprog
    from scipy.sparse import coo_array
    mu2 = positive("mu2", mu2)
    w = np.asarray(w, dtype=np.float64)
    n = 2 * K + 1
    if w.shape != (n,):
        raise ParameterError("w", f"must have {n} entries, got shape {w.shape}")
    p = duel_pairs(K)
    eps = np.linspace(0.0, GRID_SPAN * mu2, GRID)[1:]
    e, d = np.exp(eps), gdp_delta(eps, mu2)
    # per pair (i, j) and ε′: h_i − e h_j ≤ δ; h_j − e h_i ≤ δ; e h_j − h_i ≤ δ − 1 + e; e h_i − h_j ≤ δ − 1 + e
    i, j = np.repeat(p[:, 0], len(eps)), np.repeat(p[:, 1], len(eps))
    ee, dd = np.tile(e, len(p)), np.tile(d, len(p))
    r = np.arange(len(i))
    one = np.ones_like(ee)
    rows = np.concatenate([r + k * len(i) for k in (0, 0, 1, 1, 2, 2, 3, 3)])
    cols = np.concatenate([i, j, j, i, j, i, i, j])
    vals = np.concatenate([one, -ee, one, -ee, ee, -one, ee, -one])
    rhs = np.concatenate([dd, dd, dd - 1.0 + ee, dd - 1.0 + ee])
    A = coo_array((vals, (rows, cols)), shape=(4 * len(i), n)).tocsr()
    res = linprog(-w, A_ub=cast(Any, A), b_ub=rhs, bounds=(H_FLOOR, 1.0 - H_FLOOR), method="highs")
    if res.status != 0 or res.x is None:
        raise SolveError(f"duel LP for K={K}, mu2={mu2}: {res.message}")
    return np.clip(res.x, H_FLOOR, 1.0 - H_FLOOR)  # HiGHS meets its bounds to its tolerance only


@dataclass(frozen=True)
class DuelCandidate:
    """One member of the family, charged its certified total.

    Attributes:
        name: ``"gnmax"``, ``"gaussian-duel"`` or ``"lp-duel"``.
        split: the stage-1 share ρ it was designed at (1 for GNMax).
        sigma1: stage 1's noise, from the budget left after stage 2's certificate.
        mu2: stage 2's certified μ2.
        h: h over m = −K..K.
        agreement: Pr[release = truth] under the design's prior (Monte Carlo, common draws).
        epsilon: the certified total ε of Q queries at the budget's δ.
    """

    name: str
    split: float
    sigma1: float
    mu2: float
    h: np.ndarray
    agreement: float
    epsilon: float


@dataclass(frozen=True)
class DuelDesign:
    """The designed duel for a total budget, with every candidate it was chosen from.

    Attributes:
        K: teachers.
        C: classes.
        budget: the total budget.
        p_correct: the design prior's per-teacher accuracy.
        mu: the per-query GDP parameter the total allows.
        best: the chosen candidate.
        candidates: every feasible candidate (GNMax first).
    """

    K: int
    C: int
    budget: TotalBudget
    p_correct: float
    mu: float
    best: DuelCandidate
    candidates: tuple[DuelCandidate, ...]

    @property
    def gnmax(self) -> DuelCandidate:
        """The GNMax candidate (h ≡ 1)."""
        return self.candidates[0]


def _charge(mu1: float, mu2: float, budget: TotalBudget) -> float:
    return gdp_epsilon(math.sqrt(budget.queries) * math.hypot(mu1, mu2), budget.delta)


def design_duel(K: int, C: int, budget: TotalBudget, p_correct: float = 0.75, *, splits: tuple[float, ...] = SPLITS,
                samples: int = SAMPLES, seed: int = 0) -> DuelDesign:
    """The best member of the family whose certified Q-fold total meets ``budget`` (module docstring).

    Args:
        K: teachers (non-private, on disjoint shards).
        C: classes (≥ 3: Claim 2's exact pair list; C = 2 is covered too, the list is then a superset).
        budget: the total (ε, δ) over Q queries.
        p_correct: the prior's per-teacher accuracy (other classes uniform).
        splits: stage-1 shares ρ ∈ (0, 1) tried beside GNMax.
        samples: Monte-Carlo draws of the prior objective.
        seed: seeds the draws.

    Returns:
        The :class:`DuelDesign`; ``best.epsilon ≤ budget.epsilon`` and ``best.agreement ≥
        gnmax.agreement`` on the same draws.

    Raises:
        ParameterError: bad values.
        CertificationError: GNMax itself could not be charged within the budget (float64 rounding).
    """
    K, C = count("K", K), count("C", C, minimum=2)
    instance("budget", budget, TotalBudget, "a TotalBudget")
    p_correct = open_unit("p_correct", p_correct)
    if not isinstance(splits, (tuple, list)):
        raise ParameterError("splits", f"must be a tuple of stage-1 shares in (0, 1), got {splits!r}")
    for r in splits:
        open_unit("splits", r)
    draws = _draws(K, C, p_correct, count("samples", samples), count("seed", seed, minimum=0))
    mu = gdp_mu_for_total(budget.epsilon, budget.delta, budget.queries)
    for _ in range(8):  # the float64 root, rounded down until the mpmath charge agrees
        if _charge(mu, 0.0, budget) <= budget.epsilon:
            break
        mu *= 1.0 - 1e-9
    else:
        raise CertificationError("GNMax's GDP parameter could not be charged within the budget")
    out: list[DuelCandidate] = []

    def add(name: str, split: float, h: np.ndarray) -> None:
        mu2 = certified_duel_mu(h, K)
        if not mu2 < mu:
            return
        mu1 = math.sqrt(mu * mu - mu2 * mu2)
        for _ in range(8):
            e = _charge(mu1, mu2, budget)
            if e <= budget.epsilon:
                break
            mu1 *= 1.0 - 1e-9
        else:
            return
        sigma1 = math.sqrt(2.0) / mu1
        base, w, _ = _weights(K, C, sigma1, draws)
        out.append(DuelCandidate(name, split, sigma1, mu2, h, float(base + w @ h), e))

    add("gnmax", 1.0, np.ones(2 * K + 1))
    m = np.arange(-K, K + 1)
    from scipy.special import ndtr

    for rho in splits:
        mu2 = math.sqrt(1.0 - rho) * mu
        add("gaussian-duel", rho, ndtr(m * mu2 / 2.0))
        _, w, _ = _weights(K, C, math.sqrt(2.0) / (math.sqrt(rho) * mu), draws)
        try:
            add("lp-duel", rho, solve_duel(K, mu2, w))
        except SolveError:
            continue
    if not out or out[0].name != "gnmax":
        raise CertificationError("GNMax's candidate was not charged within the budget")
    best = max(out, key=lambda c: c.agreement)
    return DuelDesign(K, C, budget, p_correct, mu, best, tuple(out))


def release_duel(votes: object, K: int, C: int, candidate: DuelCandidate,
                 rng: np.random.Generator | int | None) -> np.ndarray:
    """The labels M_{σ1, h} releases for each row of ``votes`` (Q, K), classes 0..C−1, fresh noise per query.

    Stage 1 draws its noise first, as :func:`~.multiclass_aggregators.gnmax_release` does, so GNMax's
    candidate (h ≡ 1) releases the same labels as GNMax from the same generator state.

    Args:
        votes: teacher votes ``(Q, K)``.
        K: teachers.
        C: classes.
        candidate: the designed member (``DuelDesign.best``).
        rng: the mechanism's randomness.

    Returns:
        One class per query.

    Raises:
        ParameterError: bad votes, candidate or generator.
    """
    instance("candidate", candidate, DuelCandidate, "a DuelCandidate (design_duel)")
    h = _check_h(candidate.h, K)
    votes = class_votes(votes, K, count("C", C, minimum=2), min_queries=1)
    rng = generator("rng", rng)
    hist = histograms_of(votes, C)
    c1, c2 = _stage_one(hist + rng.normal(0.0, candidate.sigma1, size=hist.shape))
    rows = np.arange(len(hist))
    m = hist[rows, c1] - hist[rows, c2] + K
    keep = rng.random(len(hist)) < h[m]
    return np.where(keep, c1, c2)
