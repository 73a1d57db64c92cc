"""Metric (d_X-) local privacy in the shuffle model: bounds for one pair of inputs at distance d.

A randomizer R is ε·d_X-private (Wang et al., variation-ratio, Def. 3.5, after Chatzikokolakis et
al. 2013 and Andrés et al. 2013) when R(x)(y) <= e^{ε·d(x, x')} R(x')(y) for all inputs x, x' and
outputs y: inputs close in the metric d are hard to tell apart, distant ones less so.  Its shuffle
guarantee is therefore *per pair*: the victim's input changes from x0 to x1 at distance
d(x0, x1), and the answer depends on that pair (Wang et al. Section 4.3, "Local metric DP
randomizers", with p <= e^{ε·d01} and q <= e^{ε·d_max}).

Here the randomizer is a finite matrix (:class:`MetricRandomizer`; :func:`geometric_line` and
:func:`geometric_grid` build the clamped geometric mechanism on a line and on a grid with the ℓ1
metric), and the bounds for one pair reuse Su et al.'s machinery with the victim pair fixed:

* **upper** (Su et al. Thm 13 for one pair): with the blanket c_y = min_x R(x)(y) over *all*
  inputs, every user's message is the blanket with probability γ = Σ_y c_y whatever its input, so
  D_{e^ε}(X^0 ‖ X^1) <= (1/n) E[(ΣG_i)_+] with G the blanket GPARV of the pair (x0, x1)
  (:func:`.decomposition.blanket_atoms`); Su et al. prove it for every pair and take the maximum, so
  it holds for each pair separately.  Both directions: the maximum over (x0, x1) and (x1, x0).
* **lower** (Su et al. Thm 14): the exact divergence of (x0 | x*, ..., x*) vs (x1 | x*, ..., x*) for
  every filler x*, and of the uniform i.i.d. mixture of the others' inputs (joint convexity), both
  directions (:func:`.decomposition.dataset_atoms`, :func:`.decomposition.mixture_atoms`).

Both are evaluated by :func:`.decomposition.positive_part` (rounded up / down).  At ε >= ε·d01
both vanish: every output's likelihood ratio between x0 and x1 is at most e^{ε·d01}.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from darrm import validation as v
from darrm.errors import ParameterError

from . import small_sums
from .bound import Bound, Kind, eps_for_delta
from .decomposition import Atoms, blanket_atoms, dataset_atoms, mixture_atoms, positive_part
from .randomizers import FiniteRandomizer, joint

#: the methods' names (every Bound they return carries one)
UPPER_NAME = "metric-pair"
LOWER_NAME = "metric-pair-lower"
_UP_NOTE = "Su et al. Thm 13 blanket decomposition for this victim pair only, rounded up"
_LO_NOTE = ("Su et al. Thm 14: datasets (x0|x*,...,x*) vs (x1|x*,...,x*) for every x* and the uniform "
            "i.i.d. mixture, both directions, rounded down")
#: the largest input set accepted (every pair's bounds are evaluated by :func:`distance_profile`)
MAX_INPUTS = 400


@dataclass(frozen=True)
class MetricRandomizer:
    """A finite randomizer with a metric on its inputs, ε·d_X-private (checked at construction).

    Attributes:
        randomizer: the probability matrix (inputs × outputs).
        distance: d(x, x'), symmetric, 0 on the diagonal and > 0 off it.
        eps_unit: ε, the privacy per unit of distance (> 0).
    """

    randomizer: FiniteRandomizer
    distance: tuple[tuple[float, ...], ...]
    eps_unit: float

    def __post_init__(self) -> None:
        v.instance("randomizer", self.randomizer, FiniteRandomizer, "a FiniteRandomizer")
        eps_unit = v.epsilon("eps_unit", self.eps_unit)
        m = self.randomizer.array
        k = m.shape[0]
        if k > MAX_INPUTS:
            raise ParameterError("randomizer", f"at most {MAX_INPUTS} inputs, got {k}")
        try:
            d = np.array(self.distance, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ParameterError("distance", f"not a numeric matrix: {exc}") from None
        if d.shape != (k, k) or not np.all(np.isfinite(d)):
            raise ParameterError("distance", f"must be a finite {k} x {k} matrix, got shape {d.shape}")
        off = ~np.eye(k, dtype=bool)
        if np.any(np.diag(d) != 0) or np.any(d[off] <= 0) or not np.array_equal(d, d.T):
            raise ParameterError("distance", "must be symmetric, 0 on the diagonal and > 0 off it")
        lr = np.log(m[:, None, :] / m[None, :, :]).max(axis=2)  # max_y ln R(x)(y)/R(x')(y)
        excess = lr - eps_unit * d
        if np.any(excess > 1e-9):
            a, b = np.unravel_index(int(np.argmax(excess)), excess.shape)
            raise ParameterError("eps_unit", f"the randomizer is not {eps_unit:g}*d_X-private: inputs {a}, {b} at "
                                 f"distance {d[a, b]:g} have log-ratio {lr[a, b]:.6g}")
        object.__setattr__(self, "distance", tuple(tuple(float(x) for x in row) for row in d))
        object.__setattr__(self, "eps_unit", eps_unit)

    @property
    def n_inputs(self) -> int:
        """The number of inputs."""
        return self.randomizer.n_inputs

    @property
    def name(self) -> str:
        """A short label for tables and plots."""
        return f"metric randomizer, {self.n_inputs} inputs, {self.eps_unit:g}*d_X-private"


def _clamped_geometric(k: int, eps_unit: float) -> np.ndarray:
    """R(x)(y) of y = clamp(x + Z, 0, k − 1), Z two-sided geometric with P(Z = z) ∝ e^{−ε|z|}.

    Claim: R(x)(y) <= e^{ε|x − x'|} R(x')(y).  Proof: inside, R(x)(y) = c·a^{|y − x|} (a = e^{−ε})
    and |y − x'| − |y − x| <= |x − x'|; at the ends the clamped masses are c·a^{x}/(1 − a) and
    c·a^{k−1−x}/(1 − a), whose ratios are a^{x − x'} and a^{x' − x}."""
    a = math.exp(-eps_unit)
    c = (1 - a) / (1 + a)
    x = np.arange(k)[:, None]
    y = np.arange(k)[None, :]
    m = c * a ** np.abs(y - x).astype(float)
    m[:, 0] = c * a ** np.arange(k) / (1 - a)
    m[:, -1] = c * a ** (k - 1 - np.arange(k)) / (1 - a)
    return m


def geometric_line(k: int, eps_unit: float) -> MetricRandomizer:
    """The clamped geometric mechanism on the line {0, ..., k − 1} with d(x, x') = |x − x'|
    (the discrete analogue of the Laplace mechanism, Ghosh et al. 2009); ε·d_X-private.

    Args:
        k: the number of points (2 <= k <= 400).
        eps_unit: ε per unit of distance (> 0).

    Returns:
        The k × k metric randomizer.

    Raises:
        ParameterError: ``k`` or ``eps_unit`` out of range.
    """
    k = v.count("k", k, minimum=2, maximum=MAX_INPUTS)
    eps_unit = v.epsilon("eps_unit", eps_unit)
    pts = np.arange(k, dtype=float)
    return MetricRandomizer(FiniteRandomizer.from_array(_clamped_geometric(k, eps_unit)),
                            tuple(map(tuple, np.abs(pts[:, None] - pts[None, :]))), eps_unit)


def geometric_grid(k1: int, k2: int, eps_unit: float) -> MetricRandomizer:
    """The clamped geometric mechanism on each axis of the grid {0..k1−1} × {0..k2−1}, independently
    (the joint composition), with the ℓ1 metric: the likelihood ratios multiply, so it is
    ε·ℓ1-private.  Input (i, j) is index i·k2 + j.

    Args:
        k1: points on the first axis (>= 2).
        k2: points on the second axis (>= 2); k1·k2 <= 400.
        eps_unit: ε per unit of ℓ1 distance (> 0).

    Returns:
        The (k1·k2) × (k1·k2) metric randomizer.

    Raises:
        ParameterError: a size or ``eps_unit`` out of range.
    """
    k1, k2 = v.count("k1", k1, minimum=2), v.count("k2", k2, minimum=2)
    if k1 * k2 > MAX_INPUTS:
        raise ParameterError("k2", f"the grid has {k1 * k2} points; at most {MAX_INPUTS}")
    eps_unit = v.epsilon("eps_unit", eps_unit)
    r = joint(FiniteRandomizer.from_array(_clamped_geometric(k1, eps_unit)),
              FiniteRandomizer.from_array(_clamped_geometric(k2, eps_unit)))
    i, j = np.divmod(np.arange(k1 * k2), k2)
    d = np.abs(i[:, None] - i[None, :]) + np.abs(j[:, None] - j[None, :])
    return MetricRandomizer(r, tuple(map(tuple, d.astype(float))), eps_unit)


def _pair(mr: MetricRandomizer, x0: int, x1: int) -> tuple[int, int]:
    k = mr.n_inputs
    x0 = v.count("x0", x0, minimum=0, maximum=k - 1)
    x1 = v.count("x1", x1, minimum=0, maximum=k - 1)
    if x0 == x1:
        raise ParameterError("x1", "the victim's two inputs must differ")
    return x0, x1


def _part(at: Atoms, n: int, eps: float, kind: str, target: float | None = None) -> float:
    """The (kind) bound on (1/n) E[(ΣG)_+] for one GPARV (``target``: the δ searched for): by
    enumeration of the counts when they are few (:func:`.small_sums.positive_part_by_counts`),
    else :func:`.decomposition.positive_part`."""
    vals = at.values(eps)
    small = small_sums.positive_part_by_counts(vals, at.w, n, kind)
    if small is not None:
        return min(1.0, small / n)
    return min(1.0, positive_part(vals, at.w, n, kind, None if target is None else n * target)[0] / n)


def _distinct(atoms: list[Atoms]) -> list[int]:
    """The indices of one GPARV per distinct law of (r0, r1) (equal laws give equal bounds at every ε)."""
    out, seen = [], set()
    for i, at in enumerate(atoms):
        rows = np.round(np.stack([at.r0, at.r1, at.w], axis=1), 12)
        key = tuple(map(tuple, rows[np.lexsort(rows.T[::-1])]))
        if key not in seen:
            seen.add(key)
            out.append(i)
    return out


def max_eps(atoms: list[Atoms], n: int, delta: float, hi: float, kind: Kind) -> tuple[float, int]:
    """ε(δ) of max_i δ_i(ε), δ_i the (kind) bound of GPARV i, searching only the binding ones.

    Claim: the result equals the search over the maximum, up to the searches' tolerance, and is a
    valid bound of its kind.  Proof: GPARVs are visited in decreasing order of δ_i(hi/2); one whose
    δ_i(ε_best) <= δ already has its ε_i <= ε_best and is skipped, the others are searched
    (:func:`~.bound.eps_for_delta`) and ε_best = max.  Upper: every skipped i has δ_i(ε_best) <= δ
    checked directly, every searched one δ_i(ε_i) <= δ with ε_i <= ε_best, and the true divergences
    are non-increasing in ε, so all are <= δ at ε_best.  Lower: the binding i has δ_i(ε_best) > δ,
    so the protocol's δ(ε_best) > δ (or ε_best = 0).

    Args:
        atoms: the GPARVs (duplicates are evaluated once).
        n: the number of users.
        delta: the target δ.
        hi: an ε where every δ_i vanishes (ε·d(x0, x1)).
        kind: "upper" or "lower".

    Returns:
        (ε, the index in ``atoms`` of the GPARV that attains it).
    """
    keep = _distinct(atoms)
    fs = [lambda x, at=atoms[i]: _part(at, n, x, kind, delta) for i in keep]
    probe = [f(0.5 * hi) for f in fs]
    order = sorted(range(len(fs)), key=lambda i: -probe[i])
    best, arg = 0.0, keep[order[0]]
    for i in order:
        if best > 0 and fs[i](best) <= delta:
            continue
        e = eps_for_delta(fs[i], delta, hi, kind)
        if e > best:
            best, arg = e, keep[i]
    return best, arg


def _upper_atoms(m: np.ndarray, x0: int, x1: int) -> list[Atoms]:
    return [blanket_atoms(m, x0, x1), blanket_atoms(m, x1, x0)]


def _lower_atoms(m: np.ndarray, x0: int, x1: int) -> list[Atoms]:
    out = [mixture_atoms(m, x0, x1), mixture_atoms(m, x1, x0)]
    for xs in range(m.shape[0]):
        out += [dataset_atoms(m, x0, x1, xs), dataset_atoms(m, x1, x0, xs)]
    return out


def pair_delta(mr: MetricRandomizer, n: int, x0: int, x1: int, eps: float, kind: str = "upper") -> float:
    """δ(ε) for the victim pair (x0, x1), both directions: an upper or a lower bound (module docstring).

    Args:
        mr: the metric randomizer.
        n: the number of users.
        x0: the victim's input in one dataset.
        x1: its input in the other (≠ x0).
        eps: ε (>= 0).
        kind: "upper" or "lower".

    Returns:
        The bound on max(D_{e^ε}(X^0 ‖ X^1), D_{e^ε}(X^1 ‖ X^0)) over the other users' inputs.

    Raises:
        ParameterError: a parameter out of range.
    """
    v.instance("mr", mr, MetricRandomizer, "a MetricRandomizer")
    kind = v.choice("kind", kind, ("upper", "lower"))
    n, eps = v.count("n", n), v.epsilon("eps", eps, allow_zero=True)
    x0, x1 = _pair(mr, x0, x1)
    if eps >= mr.eps_unit * mr.distance[x0][x1]:
        return 0.0
    m = mr.randomizer.array
    atoms = _upper_atoms(m, x0, x1) if kind == "upper" else _lower_atoms(m, x0, x1)
    return max(_part(at, n, eps, kind) for at in atoms)


def pair_bounds(mr: MetricRandomizer, n: int, x0: int, x1: int, delta: float) -> list[Bound]:
    """ε(δ) upper and lower bounds for the victim pair (x0, x1).

    Args:
        mr: the metric randomizer.
        n: the number of users.
        x0: the victim's input in one dataset.
        x1: its input in the other (≠ x0).
        delta: the target δ in (0, 1).

    Returns:
        [upper, lower] :class:`~.bound.Bound` values (:data:`UPPER_NAME`, :data:`LOWER_NAME`).

    Raises:
        ParameterError: a parameter out of range.
    """
    delta, n = v.open_unit("delta", delta), v.count("n", n)
    x0, x1 = _pair(mr, x0, x1)
    hi = mr.eps_unit * mr.distance[x0][x1]
    m = mr.randomizer.array
    out = []
    kinds: tuple[tuple[Kind, str, str], ...] = (("upper", UPPER_NAME, _UP_NOTE), ("lower", LOWER_NAME, _LO_NOTE))
    for kind, name, note in kinds:
        atoms = _upper_atoms(m, x0, x1) if kind == "upper" else _lower_atoms(m, x0, x1)
        e = max_eps(atoms, n, delta, hi, kind)[0]
        out.append(Bound(name, kind, True, e, delta, f"{note}; pair ({x0}, {x1})"))
    return out


@dataclass(frozen=True)
class DistanceBound:
    """The bounds at one distance: the largest upper and the largest lower ε(δ) over the pairs at it.

    Attributes:
        distance: d(x0, x1).
        upper: the largest upper bound over those pairs (a guarantee for every pair at this distance).
        lower: the largest lower bound over them (some pair at this distance is no better).
        pair: the pair (x0, x1) whose upper bound is the largest.
    """

    distance: float
    upper: Bound
    lower: Bound
    pair: tuple[int, int]


def distance_profile(mr: MetricRandomizer, n: int, delta: float) -> list[DistanceBound]:
    """For every distance d between inputs: the worst pair's bounds (every unordered pair, both
    directions, one :func:`max_eps` search over all their GPARVs per distance and kind).

    Args:
        mr: the metric randomizer.
        n: the number of users.
        delta: the target δ in (0, 1).

    Returns:
        One :class:`DistanceBound` per distinct distance, increasing.

    Raises:
        ParameterError: a parameter out of range.
    """
    v.instance("mr", mr, MetricRandomizer, "a MetricRandomizer")
    delta, n = v.open_unit("delta", delta), v.count("n", n)
    k = mr.n_inputs
    m = mr.randomizer.array
    by_d: dict[float, list[tuple[int, int]]] = {}
    for a in range(k):
        for b in range(a + 1, k):
            by_d.setdefault(mr.distance[a][b], []).append((a, b))
    out = []
    for d in sorted(by_d):
        pairs = by_d[d]
        res = {}
        kinds: tuple[tuple[Kind, str, str, Callable[[np.ndarray, int, int], list[Atoms]]], ...] = (
            ("upper", UPPER_NAME, _UP_NOTE, _upper_atoms), ("lower", LOWER_NAME, _LO_NOTE, _lower_atoms))
        for kind, name, note, make in kinds:
            atoms, owner = [], []
            for pr in pairs:
                new = make(m, *pr)
                atoms += new
                owner += [pr] * len(new)
            e, i = max_eps(atoms, n, delta, mr.eps_unit * d, kind)
            res[kind] = (Bound(name, kind, True, e, delta, f"{note}; worst pair at distance {d:g}: {owner[i]}"),
                         owner[i])
        out.append(DistanceBound(d, res["upper"][0], res["lower"][0], res["upper"][1]))
    return out
