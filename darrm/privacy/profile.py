"""The exact privacy profile of a γ table and its finite dominating pair.

Public API (stable; :mod:`accounting.queries` and the total-budget solver build on it):

* :func:`darrm.privacy_profile` (table or γ, params, executor=…, method=…) → :class:`PrivacyProfile`,
  which asks the member model (:meth:`darrm.models.base.MemberModel.profile`); members on shared
  data end in :func:`shared_profile`, every model's envelope in :func:`finish`;
* :class:`PrivacyProfile`: ``delta(eps)`` (δ_γ(ε′), vectorised), ``epsilon(delta)``,
  ``pair()`` → (P, Q), ``infinite_loss_mass``, ``vertices``, ``fingerprint()``;
* :func:`upper_hull` (the envelope of a point cloud) and :class:`Envelope` (online);
* ``tests/references/profile_reference.py``: the brute-force high-precision
  reference used by the tests.

**Claim 1 (the profile is a maximum over corner multisets).**  Fix a symmetric γ and s = e^{ε′} ≥ 1.
For neighbouring D, D′ the hockey-stick divergence of DaRRM_γ's binary output is

    H_s(A(D)‖A(D′)) = Σ_o max(0, Pr[A(D)=o] − s·Pr[A(D′)=o]) = max_o max(0, Pr[A(D)=o] − s·Pr[A(D′)=o]),

because at most one term is positive: if Pr[A(D)=1] > s·Pr[A(D′)=1] ≥ Pr[A(D′)=1] then
Pr[A(D)=0] < Pr[A(D′)=0] ≤ s·Pr[A(D′)=0].  Each Pr[A(·)=o] = Σ_l α_l w_l is affine in each
member's (p_i, p′_i) with the others fixed (Lemma 3.4's condition: the Poisson-binomial pmf is
affine in each p_i), so Pr[A(D)=o] − s·Pr[A(D′)=o] is affine in each (p_i, p′_i) and its maximum
over the product of the members' (ε, Δ) regions F is attained with every member at a vertex of F;
only the multiset of vertices matters (Lemma 5.1's argument, which never used s = e^{mε}).  So the
exact profile δ_γ(ε′) = sup_{D≃D′} H_{e^{ε′}}(A(D)‖A(D′)) is the maximum, over corner multisets,
both outputs and both directions, of max(0, Pr[A(D)=o] − e^{ε′}·Pr[A(D′)=o]).  For disjoint
members the same holds with the O(K) configurations of :mod:`darrm.models.disjoint` (its proof also
only uses that the cost is affine in each member's probabilities), and for grouped members with
one corner multiset per group (:mod:`darrm.models.groups.profile`, either γ form).

**Claim 2 (the dominating pair).**  Let 𝒞 be the cloud of points (x, y) = (Pr[A(D′)=o], Pr[A(D)=o])
over all configurations, both outputs and both directions, together with (0, 0) and (1, 1), and
let (x_0 = 0, y_0), …, (x_n = 1, y_n = 1) be the vertices of its upper concave envelope (x
ascending; y_0 is the largest y at x = 0).  Define the distributions on n + 1 atoms

    P(0) = y_0, Q(0) = 0   (the infinite-loss atom),   P(j) = y_j − y_{j−1}, Q(j) = x_j − x_{j−1}.

Then H_s(P‖Q) = max_j (y_j − s·x_j) = δ_γ(log s) for every s ≥ 1, and (P, Q) dominates DaRRM_γ
(Zhu, Dong & Wang 2022, Definition 7) in both directions for every s ≥ 0.
*Proof.*  The slopes P(j)/Q(j) of the envelope decrease in j (concavity), so
Σ_j max(0, P(j) − s·Q(j)) = y_0 + Σ_{j ≤ J} (P(j) − s·Q(j)) = y_J − s·x_J with J the last index
whose slope exceeds s, and y_J − s·x_J = max_j (y_j − s·x_j) because the sequence y_j − s·x_j
increases while the slope exceeds s and decreases after.  The maximum of the linear function
y − s·x over 𝒞 equals its maximum over the envelope's vertices (a linear function's maximum over
the hull of 𝒞 is at a vertex, and for s ≥ 0 it is on the upper chain), and the vertices are
points of 𝒞, so max_j (y_j − s·x_j) = max(0, max over 𝒞 of y − s·x) = δ_γ(log s) by Claim 1
((0, 0) gives the max with 0; (1, 1) adds 1 − s ≤ 0).  Both directions are in 𝒞, so the same
(P, Q) bounds H_s(A(D′)‖A(D)) too.  For s < 1, H_s(P‖Q) = 1 − s + s·H_{1/s}(Q‖P) and the same
identity holds for the mechanism; 𝒞 is symmetric under (x, y) → (1 − y, 1 − x) (swap and
reflection of the corner set), so H_{1/s}(Q‖P) = H_{1/s}(P‖Q) ≥ the mechanism's.  By Zhu et al.
Theorem 10 the Q-fold product (P^Q, Q^Q) then dominates the adaptive Q-fold composition (members
answering each query with fresh randomness; see :mod:`accounting.queries`).  ∎

**Rigour (outward rounding).**  The probabilities are computed as in the certificate: every
computed value P̂ satisfies |P̂ − P| ≤ ρ·P + η (ρ = ρ(K), η the underflow/flush term of
:mod:`darrm.privacy.condition`; disjoint members add the mass their windows leave out to y).  Each
envelope vertex is rounded outward, x ↦ max(0, (x̂ − η)/(1 + ρ)) (≤ the true x) and
y ↦ min(1, (ŷ + η)/(1 − ρ)) (≥ the true y), then the envelope is taken again: the true cloud lies
below-right of the reported one, so for every s ≥ 0 the reported y − s·x is ≥ the true one, and
the reported profile and pair are upper bounds (the masses P(j), Q(j) are then formed in float64,
each within one rounding of the vertex differences).  :meth:`PrivacyProfile.delta` adds the
rounding of its own evaluation.  The gap to the exact profile is ≤ (ρ·(y + s·x) + (1 + s)·η) per
vertex: ~1e-13 relative at K = 101.

**Scale.**  The cloud is never materialised.  For Δ > 0 the sweep of :mod:`darrm.privacy.sweep`
gives, per tuple (n_1, n_3, n_4, n_5) of a block, y = Pr[A(D)=1] (independent of n_2) and the
minimum and maximum over n_2 of x = Pr[A(D′)=1]; for a fixed y only the smallest x can be on the
(non-decreasing) envelope, and for the swapped point (x ↔ y) only the largest, so each tuple
contributes two points.  Output 0 is output 1 at the reflected multiset, which the sweep visits,
and the skipped swapped blocks contribute the swapped points.  Each worker keeps an
:class:`Envelope`: a gather's points are filtered against the current envelope (``np.interp``)
and the few survivors merged; the workers' envelopes are merged at the end.  Δ = 0 uses the
pure-DP blocks (:func:`darrm.privacy.pure_blocks.pure_block`).  Every executor of the sweep works
(serial, processes, Dask, a torch device).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..backends.devices import TorchDevice
from ..backends.executors import Executor, SerialExecutor, one_blas_thread
from ..errors import ParameterError
from ..mechanism import output_weights
from ..params import PrivacyParams
from .approx_blocks import sweep_R
from .condition import _TINY, FLUSH_BELOW, UNIT_ROUNDOFF, relative_error_bound
from .corner_pmfs import pmf_pairs
from .corners import complements, corner_count, corners, iter_count_vector_blocks, multiset_count
from .pure_blocks import pure_block
from .sweep import sweep_executor
from .sweep_tables import PureTables, SweepTables, build_pure_tables, build_tables

__all__ = ["Envelope", "PrivacyProfile", "both_directions", "finish", "shared_profile", "upper_hull"]

#: ``method="auto"`` enumerates the multisets directly up to this many (else the sweep)
DIRECT_MAX_MULTISETS = 20_000
#: above this many points a merge first seeds the envelope with each slope's best point
_SEED_ABOVE = 2048
_SEED_SLOPES = np.concatenate([[0.0], np.exp(np.linspace(-4.0, 20.0, 13))])
#: vectorised passes of :func:`upper_hull` before its sequential finish
_HULL_PASSES = 64


def upper_hull(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (x ascending) of the upper concave envelope of the points (x, y): one vertex per
    x (the largest y), collinear points dropped.

    Vectorised passes first: with the points sorted by x, every interior point on or below the
    chord of its two neighbours is removed at once (a point on or below a segment between two
    other points is never a vertex); when no point is removed the chain turns right at every
    vertex, so it is concave and is the envelope.  After :data:`_HULL_PASSES` passes the rest
    is finished by Andrew's monotone chain (upper half)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    order = np.lexsort((-y, x))
    x, y = x[order], y[order]
    first = np.ones(x.shape[0], dtype=bool)
    first[1:] = x[1:] != x[:-1]
    x, y = x[first], y[first]
    for _ in range(_HULL_PASSES):
        if x.shape[0] <= 2:
            return x, y
        cross = (x[1:-1] - x[:-2]) * (y[2:] - y[:-2]) - (y[1:-1] - y[:-2]) * (x[2:] - x[:-2])
        drop = cross >= 0.0
        if not drop.any():
            return x, y
        keep = np.ones(x.shape[0], dtype=bool)
        keep[1:-1] = ~drop
        x, y = x[keep], y[keep]
    hx: list[float] = []
    hy: list[float] = []
    for px, py in zip(x.tolist(), y.tolist(), strict=True):
        # pop while the last two vertices and the new point do not turn right (clockwise)
        while len(hx) >= 2 and (hx[-1] - hx[-2]) * (py - hy[-2]) - (hy[-1] - hy[-2]) * (px - hx[-2]) >= 0.0:
            hx.pop()
            hy.pop()
        hx.append(px)
        hy.append(py)
    return np.array(hx), np.array(hy)


class Envelope:
    """The upper concave envelope of a growing cloud in [0, 1]², starting from (0, 0) and (1, 1).

    :meth:`add` keeps only the points strictly above the current envelope (they are the only ones
    that can be vertices of the final one: the envelope only grows) and merges them."""

    def __init__(self, x: np.ndarray | None = None, y: np.ndarray | None = None):
        self.x = np.array([0.0, 1.0])
        self.y = np.array([0.0, 1.0])
        if x is not None and y is not None:
            self.add(x, y)

    def add(self, x: Any, y: Any, xp: Any = np) -> None:
        """Add the points (x, y) (arrays of one shape, numpy or torch)."""
        if xp is not np:
            x, y = x.cpu().numpy(), y.cpu().numpy()
        x = np.asarray(x, dtype=np.float64).ravel()
        y = np.asarray(y, dtype=np.float64).ravel()
        keep = y > np.interp(x, self.x, self.y)
        if not keep.any():
            return
        x, y = x[keep], y[keep]
        if x.shape[0] > _SEED_ABOVE:
            # each slope's best point is a vertex of the cloud's envelope: merge those first,
            # then most of the rest falls below
            best = np.argmax(y[None, :] - _SEED_SLOPES[:, None] * x[None, :], axis=1)
            self._merge(x[best], y[best])
            keep = y > np.interp(x, self.x, self.y)
            x, y = x[keep], y[keep]
        if x.shape[0]:
            self._merge(x, y)

    def _merge(self, x: np.ndarray, y: np.ndarray) -> None:
        self.x, self.y = upper_hull(np.concatenate([self.x, x]), np.concatenate([self.y, y]))


@dataclass(frozen=True)
class PrivacyProfile:
    """The privacy profile δ(ε′) of one DaRRM_γ query and its dominating pair (module docstring).

    Attributes:
        x: the envelope's vertices' first coordinates, rounded outward, ascending from 0 to 1.
        y: their second coordinates, from the infinite-loss mass y[0] to 1:
            δ(ε′) = max_j (y_j − e^{ε′}·x_j).
        K: the number of members.
        model: "shared" (every member sees the differing record; Lemma 5.1's corners),
            "disjoint" (one member's shard changes; :mod:`darrm.models.disjoint`), "groups" (members
            on shared data with per-group budgets; :mod:`darrm.models.groups.profile`) or "shard-groups"
            (a record copied into r_g shards; :mod:`darrm.models.shard_groups.profile`).
        rho: the relative error bound the outward rounding used.
        eta: the absolute error bound the outward rounding used.
        points: how many cloud points were examined (both outputs and directions).
    """

    x: np.ndarray
    y: np.ndarray
    K: int
    model: str
    rho: float
    eta: float
    points: int

    def __post_init__(self) -> None:
        x = np.asarray(self.x, dtype=np.float64)
        y = np.asarray(self.y, dtype=np.float64)
        if x.ndim != 1 or x.shape != y.shape or x.shape[0] < 2 or x[0] != 0.0 or x[-1] != 1.0 or y[-1] != 1.0:
            raise ParameterError("x", "profile vertices must run from x = 0 to (1, 1)")
        if np.any(np.diff(x) <= 0) or np.any(np.diff(y) < 0) or y[0] < 0:
            raise ParameterError("y", "profile vertices must increase")
        x.flags.writeable = False
        y.flags.writeable = False
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "y", y)

    @property
    def infinite_loss_mass(self) -> float:
        """δ(∞) = y_0: the probability of an output that D′ can never produce (the δ floor:
        no ε, however large, gives a smaller δ, for one query or for Q of them)."""
        return float(self.y[0])

    @property
    def vertices(self) -> np.ndarray:
        """(n + 1, 2): the rounded envelope vertices (x_j, y_j)."""
        return np.stack([self.x, self.y], axis=1)

    def delta(self, eps: float | np.ndarray) -> float | np.ndarray:
        """δ(ε′) = max_j (y_j − e^{ε′}·x_j) for ε′ ≥ 0 (ε′ = inf: the infinite-loss mass).

        An upper bound on the exact profile: the rounding of this evaluation, ≤ 3u·(y_j + e^{ε′}·x_j),
        is added.

        Args:
            eps: ε′ ≥ 0, a number or an array.

        Returns:
            δ(ε′) in [0, 1], a float for a number, an array for an array.

        Raises:
            ParameterError: ε′ < 0 or NaN.
        """
        e = np.asarray(eps, dtype=np.float64)
        if np.any(np.isnan(e)) or np.any(e < 0):
            raise ParameterError("eps", f"must be >= 0, got {eps!r}")
        with np.errstate(over="ignore", invalid="ignore"):
            s = np.exp(e)[..., None]
            xs = np.where(self.x > 0, s * self.x, 0.0)
            val = self.y + 3.0 * UNIT_ROUNDOFF * self.y - xs * (1.0 - 3.0 * UNIT_ROUNDOFF)
        out = np.clip(np.max(val, axis=-1), 0.0, 1.0)
        return float(out) if np.ndim(out) == 0 else out

    def epsilon(self, delta: float) -> float:
        """The smallest ε′ ≥ 0 with δ(ε′) ≤ ``delta`` (inf below the infinite-loss mass).

        Each vertex needs e^{ε′} ≥ (y_j − δ)/x_j.

        Args:
            delta: the target δ, in [0, 1].

        Returns:
            ε′, rounded up.

        Raises:
            ParameterError: ``delta`` outside [0, 1].
        """
        d = float(delta)
        if not 0.0 <= d <= 1.0:
            raise ParameterError("delta", f"must lie in [0, 1], got {delta!r}")
        y = self.y + 3.0 * UNIT_ROUNDOFF * self.y
        if y[0] > d:
            return math.inf
        pos = self.x > 0
        need = (y[pos] - d) / (self.x[pos] * (1.0 - 3.0 * UNIT_ROUNDOFF))
        s = float(np.max(need, initial=1.0))
        return max(0.0, math.log(s)) if s > 1.0 else 0.0

    def pair(self) -> tuple[np.ndarray, np.ndarray]:
        """The dominating pair (P, Q) on n + 1 atoms (module docstring, Claim 2).

        P(0) = y_0, Q(0) = 0 (infinite loss), P(j) = y_j − y_{j−1}, Q(j) = x_j − x_{j−1}.

        Returns:
            (P, Q), two arrays of length n + 1.
        """
        P = np.concatenate([[self.y[0]], np.diff(self.y)])
        Q = np.concatenate([[0.0], np.diff(self.x)])
        return P, Q

    def fingerprint(self) -> str:
        """sha256 of the model and the exact vertices (``float.hex``): the pair's identity.

        Returns:
            The hex digest.
        """
        body = self.model + ";" + ",".join(float(v).hex() for v in np.concatenate([self.x, self.y]))
        return hashlib.sha256(body.encode()).hexdigest()


def _absolute_error(K: int) -> float:
    """η of :mod:`darrm.privacy.condition`: what underflow and the flush below τ can lose."""
    return 4.0 * float(K + 2) ** 3 * _TINY + 8.0 * float(K + 2) * FLUSH_BELOW


def finish(env_x: np.ndarray, env_y: np.ndarray, K: int, model: str, points: int,
           extra_y: float = 0.0, extra_eta: float = 0.0) -> PrivacyProfile:
    """Round a model's envelope outward (module docstring) and take it again (``extra_eta``: the
    model's own absolute error term, added to η; ``extra_y``: mass its evaluation leaves out, added
    to y only): every member model's profile ends here."""
    rho, eta = relative_error_bound(K), _absolute_error(K) + extra_eta
    x = np.clip((np.asarray(env_x) - eta) / (1.0 + rho), 0.0, 1.0)
    y = np.clip((np.asarray(env_y) + eta + extra_y) / (1.0 - rho), 0.0, 1.0)
    hx, hy = upper_hull(np.concatenate([x, [0.0, 1.0]]), np.concatenate([y, [0.0, 1.0]]))
    return PrivacyProfile(hx, hy, K, model, rho, eta + extra_y, points)


def both_directions(env: Envelope, a: np.ndarray, b: np.ndarray) -> None:
    """Points of one output at some configurations: (Pr[A(D′)], Pr[A(D)]) and the other direction."""
    env.add(b, a)
    env.add(a, b)


# ------------------------------------------------------------------ shared members (Lemma 5.1)
def _direct_shared(g: np.ndarray, params: PrivacyParams) -> tuple[Envelope, int]:
    """Every corner multiset by its own Poisson-binomial pmfs (small K)."""
    cs, comp = corners(params.eps, params.member_delta), complements(params.eps, params.member_delta)
    w = output_weights(g)
    env, n = Envelope(), 0
    for counts in iter_count_vector_blocks(params.K, cs.shape[0], 1 << 14):
        a, ap = pmf_pairs(counts, cs, comp)
        both_directions(env, a @ w, ap @ w)
        both_directions(env, a @ w[::-1], ap @ w[::-1])  # Pr[A = 0 | L = l] = w_{K−l} (γ symmetric)
        n += 4 * counts.shape[0]
    return env, n


def _profile_block_task(shared: tuple, R: int) -> tuple[np.ndarray, np.ndarray, int]:
    tables, chk = shared
    env = Envelope()

    def points(a: Any, bmin: Any, bmax: Any, xp: Any) -> None:
        env.add(bmin, a, xp)  # (x, y) = (min over n_2 of Pr[A(D′)=1], Pr[A(D)=1])
        env.add(a, bmax, xp)  # swapped: the largest y for x = Pr[A(D)=1]

    res = sweep_R(tables, R, chk, 0, -np.inf, None, points=points)
    return env.x, env.y, 2 * res.checked


def _profile_pure_task(shared: tuple, c: int) -> tuple[np.ndarray, np.ndarray, int]:
    tables, _ = shared
    env = Envelope()
    _pure_points(env, tables, c)
    K = tables.K
    d = np.arange(min(c, K - c) + 1)
    return env.x, env.y, int(4 * np.sum((K - c + 1 - d) * np.where(d < c, 2, 1)))


def _pure_points(env: Envelope, tables: Any, c: int, xp: Any = np) -> None:
    """Δ = 0 block n_(hi,lo) = c (:func:`darrm.privacy.pure_blocks.pure_block`): every valid (s, d)."""
    K = tables.K
    n, D = K - c + 1, min(c, K - c) + 1
    pa, pb = pure_block(tables, c, xp)
    if xp is not np:
        pa, pb = pa.cpu().numpy(), pb.cpu().numpy()
    valid = np.arange(n)[None, :] <= (n - 1 - np.arange(D))[:, None]
    both_directions(env, pa[valid], pb[valid])


def _sweep_shared(g: np.ndarray, params: PrivacyParams, executor: Executor | TorchDevice) -> tuple[Envelope, int]:
    K = params.K
    env, n = Envelope(), 0
    if isinstance(executor, TorchDevice):
        if params.member_delta > 0:
            T = build_tables(g, params)
            Tt = SweepTables(K, tuple(executor.put(u) for u in T.U), executor.put(np.array(T.H)), T.lut)

            def points(a: Any, bmin: Any, bmax: Any, xp: Any) -> None:
                env.add(bmin, a, xp)
                env.add(a, bmax, xp)

            for R in range(K, -1, -1):
                n += 2 * sweep_R(Tt, R, params.check, 0, -np.inf, None, xp=executor.xp, points=points).checked
        else:
            P = build_pure_tables(g, params)
            Pt = PureTables(K, *(executor.put(a) for a in (P.Xhi, P.Xlo, P.Bhi, P.Blo)))
            for c in range(K + 1):
                _pure_points(env, Pt, c, executor.xp)
                n += 4 * (K - c + 1) * (min(c, K - c) + 1)
        return env, n
    fn: Callable[[tuple, int], tuple[np.ndarray, np.ndarray, int]]
    if params.member_delta > 0:
        shared: tuple = (build_tables(g, params), params.check)
        fn, items = _profile_block_task, list(range(K, -1, -1))
    else:
        shared = (build_pure_tables(g, params), params.check)
        fn, items = _profile_pure_task, list(range(K + 1))
    with one_blas_thread():
        for hx, hy, cnt in executor.run(fn, shared, items):
            env.add(hx, hy)
            n += cnt
    return env, n


def shared_profile(g: np.ndarray, params: PrivacyParams, executor: Executor | TorchDevice | None, method: str,
                   max_memory: float | None) -> PrivacyProfile:
    """The profile of members on shared data (Claims 1 and 2 over Lemma 5.1's corner multisets), for
    :func:`darrm.models.profile.privacy_profile` (its arguments checked there; ``g`` validated).

    Args:
        g: γ(0..K), validated.
        params: only K, ε and Δ matter (the profile is over every ε′).
        executor: where the sweep's blocks run (None: as many local processes as fit).
        method: "auto" (direct enumeration up to :data:`DIRECT_MAX_MULTISETS` multisets, else the
            sweep), "direct" or "sweep".
        max_memory: the sweep's memory budget in bytes (None: the memory available).

    Raises:
        ParameterError: the sweep does not fit the memory budget.
    """
    total = multiset_count(params.K, corner_count(params.member_delta))
    if method == "direct" or (method == "auto" and total <= DIRECT_MAX_MULTISETS and executor is None):
        env, n = _direct_shared(g, params)
    else:
        ex = sweep_executor(params, executor, max_memory)
        env, n = _sweep_shared(g, params, ex if ex is not None else SerialExecutor())
    return finish(env.x, env.y, params.K, "shared", n)
