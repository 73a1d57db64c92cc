"""The per-group parametrisation γ(l_1, …, l_G): DaRRM reading each group's vote count.

**Claim (Lemma 3.3 allows it).**  Lemma 3.3 says that any A with Pr[A(S) = g(S)] ≥ ½ for every
vote vector S is DaRRM with γ(S) = 2·Pr[A(S) = g(S)] − 1: γ may read the whole vote vector S, not
only L = Σ_i S_i.  A γ that reads the groups' vote counts l = (l_1, …, l_G), l_g = Σ_{i ∈ g} S_i,
is such a function of S: the mechanism releases the majority 1{L ≥ mid} with probability γ(l) and
a fair coin otherwise, so

    w(l) = Pr[A = 1 | l] = γ(l)·1{l_1 + ⋯ + l_G ≥ mid} + ½(1 − γ(l)),

and the γ(L) of the paper is the special case γ(l) = γ_L(Σ_g l_g).

**Proof that one inequality family still covers both outputs and both directions.**  With the
members independent, the counts l_g are independent and Pr[l] = Π_g α_g[l_g], so
Pr[A(D) = 1] = Σ_l Π_g α_g[l_g]·w(l) is affine in each member's (p_i, p′_i), exactly as for γ(L):
:mod:`darrm.models.groups.params`' argument (every member at a vertex of its own region, one corner
multiset per group) goes through unchanged, since it only used that f is affine member by member
and that l_g is invariant under permuting the members of group g.  The joint swap (p, p′) → (p′, p)
of every member exchanges D and D′ (nothing about γ is used).  The joint reflection
(p, p′) → (1 − p, 1 − p′) of every member maps each l_g to K_g − l_g, so l to K⃗ − l,
K⃗ = (K_1, …, K_G).  We require the **symmetric joint reflection** γ(l) = γ(K⃗ − l); then, since
Σ_g (K_g − l_g) = K − L and K is odd, 1{K − L ≥ mid} = 1 − 1{L ≥ mid} and

    1 − w(l) = ½(1 − γ(l)) + γ(l)·(1 − 1{L ≥ mid}) = w(K⃗ − l),

so Pr[A = 0] under a configuration equals Pr[A = 1] under its reflection.  Both maps send the
product of the groups' corner sets onto itself, hence the largest violation of output 1, D → D′,
over every configuration bounds the other three families.  Lemma 3.3's argument applies: the
released bit is the majority with probability γ(l) ≥ 0 and a fair coin otherwise, so
Pr[A(S) = g(S)] = ½ + ½γ(l) ≥ ½.

**Variables.**  K is odd, so no l has L = K − L: the reflection pairs the Π_g(K_g + 1) count
vectors (an even number, since some K_g is odd) without a fixed point, and each pair has exactly one
member with L ≥ mid.  The LP's variables are γ(l) on U = {l : Σ_g l_g ≥ mid}, Π_g(K_g + 1)/2 of
them (C order), the rest mirrored.  A configuration's row (Lemma 3.4, Eq. 1, folded as
:func:`darrm.privacy.condition.folded_rows`) is

    Σ_{l ∈ U} [α(l) − α(K⃗ − l) − e^ε(α′(l) − α′(K⃗ − l))]·γ(l) ≤ e^ε − 1 + 2δ,

with α(l) = Π_g α_g[l_g].  Every γ(L) is a feasible γ(l) (the same rows summed over the level sets
of L), so the per-group optimum is never worse than γ_opt(L): the LPs are nested.

**Objective.**  The expected error is ½ Σ_{l ∈ U} d(l)(1 − γ(l)) with d(l) = E[α(l) − α(K⃗ − l)].
For independent members with their own means (``means:``) E[α(l)] = Π_g PB(means of group g)[l_g].
For the exchangeable priors (i.i.d. members, or one common p: ``iid``, ``beta``, ``density``,
``paper-mc``) the vote vector is exchangeable, so given L = Σ_g l_g every split is equally likely:
E[α(l)] = E[α_L(L)]·h(l), h(l) = Π_g C(K_g, l_g)/C(K, L), and h(K⃗ − l) = h(l); so
d(l) = h(l)·d_L(L) with the prior's own margins d_L (:meth:`darrm.Prior.expected_margins`,
folded where the prior folds).
"""

from __future__ import annotations

import math

import numpy as np

from ...errors import ParameterError
from ...mechanism import output_weights
from ...prior import IndependentPrior, Prior
from .params import GroupParams
from .params import validate_group_gamma as validate_group_gamma  # the checks live with the parameters
from .params import validate_joint_gamma as validate_joint_gamma

#: priors whose members are exchangeable (module docstring: E[α(l)] = E[α_L(L)]·h(l))
EXCHANGEABLE_PRIORS = ("iid", "beta", "density", "paper-mc")


def joint_shape(params: GroupParams) -> tuple[int, ...]:
    """(K_1 + 1, …, K_G + 1): the shape of a per-group table."""
    return tuple(g.size + 1 for g in params.groups)


def level_sums(params: GroupParams) -> np.ndarray:
    """L(l) = Σ_g l_g over the per-group table's cells (int64, :func:`joint_shape`)."""
    grids = np.meshgrid(*[np.arange(n) for n in joint_shape(params)], indexing="ij")
    return np.sum(grids, axis=0) if grids else np.zeros((), dtype=np.int64)


def upper_mask(params: GroupParams) -> np.ndarray:
    """U = {l : Σ_g l_g ≥ mid}: the cells holding the LP's variables (module docstring)."""
    return level_sums(params) >= params.mid


def variables(params: GroupParams) -> int:
    """|U| = Π_g(K_g + 1)/2 (module docstring)."""
    return math.prod(joint_shape(params)) // 2


def joint_from_upper(x: np.ndarray, params: GroupParams) -> np.ndarray:
    """The full per-group table from its values on U (C order), mirrored by γ(l) = γ(K⃗ − l).

    Raises:
        ParameterError: naming ``gamma``, when x has not |U| entries.
    """
    x = np.asarray(x, dtype=np.float64)
    n = variables(params)
    if x.shape != (n,):
        raise ParameterError("gamma", f"the per-group upper half must have {n} entries, got shape {x.shape}")
    mask = upper_mask(params)
    g = np.zeros(joint_shape(params))
    g[mask] = x
    return np.where(mask, g, np.flip(g))


def upper_of(gamma: np.ndarray, params: GroupParams) -> np.ndarray:
    """γ(l) for l ∈ U (C order): the LP's variables of a full per-group table."""
    return np.asarray(gamma, dtype=np.float64)[upper_mask(params)]


def joint_of_total(gamma_L: np.ndarray, params: GroupParams) -> np.ndarray:
    """γ(l) = γ_L(Σ_g l_g): the per-group table of a γ(L) table (the LPs' nesting)."""
    return np.asarray(gamma_L, dtype=np.float64)[level_sums(params)]


def joint_weights(gamma: np.ndarray, params: GroupParams) -> np.ndarray:
    """W(l) = Pr[A = 1 | l] = γ(l)·1{Σ_g l_g ≥ mid} + ½(1 − γ(l)) (module docstring; 3 roundings
    per entry, as :func:`darrm.mechanism.output_weights`)."""
    g = np.asarray(gamma, dtype=np.float64)
    w = 0.5 * (1.0 - g)
    mask = upper_mask(params)
    w[mask] += g[mask]
    return w


def group_output_weights(gamma: np.ndarray, params: GroupParams) -> np.ndarray:
    """Pr[A = 1 | votes] of a validated table of the parameters' form: w over L
    (:func:`darrm.mechanism.output_weights`) or W over (l_1, …, l_G) (:func:`joint_weights`).
    Pr[A = 0 | votes] is this table flipped along every axis (the reflection, module docstring)."""
    return joint_weights(gamma, params) if params.per_group else output_weights(gamma)


def joint_pmf_table(pmfs: list[np.ndarray]) -> np.ndarray:
    """α(l) = Π_g α_g[l_g] for a batch: (B, K_1 + 1, …, K_G + 1) from the groups' (B, K_g + 1) pmfs."""
    out = pmfs[0]
    for p in pmfs[1:]:
        out = out[..., None] * p.reshape((p.shape[0],) + (1,) * (out.ndim - 1) + (p.shape[1],))
    return out


def joint_folded_rows(pmfs: list[np.ndarray], pmfs_p: list[np.ndarray], exp_eps: float,
                      params: GroupParams) -> np.ndarray:
    """The LP rows (B, |U|) of a batch of configurations (module docstring), given each group's
    pmfs α_g, α′_g (B, K_g + 1): row·γ(U) ≤ e^ε − 1 + 2δ iff the configuration's four
    inequalities hold (exact-constant floats: the LP's rows, not the certificate's verdict)."""
    a, ap = joint_pmf_table(pmfs), joint_pmf_table(pmfs_p)
    diff = a - exp_eps * ap
    B = diff.shape[0]
    mask = upper_mask(params)
    flipped = np.flip(diff, axis=tuple(range(1, diff.ndim)))
    return diff.reshape(B, -1)[:, mask.ravel()] - flipped.reshape(B, -1)[:, mask.ravel()]


def _pb(means: np.ndarray) -> np.ndarray:
    a = np.ones(1)
    for p in means:
        a = np.concatenate([a * (1.0 - p), [0.0]]) + np.concatenate([[0.0], a * p])
    return a


def _split_counts(params: GroupParams) -> np.ndarray:
    """Π_g C(K_g, l_g) over the per-group table's cells: the vote vectors with those group counts."""
    h = np.ones(joint_shape(params))
    for gi, gr in enumerate(params.groups):
        c = np.array([math.comb(gr.size, k) for k in range(gr.size + 1)], dtype=np.float64)
        h = h * c.reshape((1,) * gi + (-1,) + (1,) * (len(params.groups) - gi - 1))
    return h


def joint_margins(params: GroupParams, prior: Prior) -> np.ndarray:
    """d(l) = E[α(l) − α(K⃗ − l)] for l ∈ U (C order) under ``prior`` (module docstring).

    Raises:
        ParameterError: naming ``prior``, for a prior that is neither exchangeable nor
            independent members with their own means, or whose margins are no expected error.
    """
    K = params.K
    d_L = np.asarray(prior.expected_margins(K), dtype=np.float64)  # its own checks (signed objective)
    mask = upper_mask(params)
    if isinstance(prior, IndependentPrior):
        prior.check_K(K)
        means = np.asarray(prior.means)
        bounds = np.cumsum([0] + [g.size for g in params.groups])
        pmfs = [_pb(means[bounds[i]:bounds[i + 1]])[None, :] for i in range(len(params.groups))]
        e = joint_pmf_table(pmfs)[0]
        return (e - np.flip(e))[mask]
    if prior.kind not in EXCHANGEABLE_PRIORS:
        raise ParameterError("prior", f"the per-group form needs independent members (means:) or an exchangeable "
                                      f"prior ({', '.join(EXCHANGEABLE_PRIORS)}), got {prior.kind!r}")
    L = level_sums(params)
    h = _split_counts(params) / np.array([math.comb(K, int(v)) for v in L.ravel()], dtype=np.float64).reshape(L.shape)
    return (h * d_L[np.clip(L - params.mid, 0, None)])[mask]


def joint_objective(params: GroupParams, prior: Prior) -> tuple[np.ndarray, float]:
    """(c, A): LP costs c = −½ d over U and the constant A = −Σc, so that the expected error of a
    per-group table is A + c·γ(U) (module docstring; Eq. 196–201 group by group)."""
    c = -0.5 * joint_margins(params, prior)
    return c, float(-c.sum())


def joint_expected_error(gamma: np.ndarray, params: GroupParams, prior: Prior) -> float:
    """The expected error of a per-group table under the prior (:func:`joint_objective`)."""
    c, A = joint_objective(params, prior)
    return A + float(c @ upper_of(gamma, params))


def per_group_text(gamma: np.ndarray, params: GroupParams) -> str:
    """A per-group table as text: one line per count vector l with Σ_g l_g ≥ mid (the rest mirror it)."""
    g = np.asarray(gamma, dtype=np.float64)
    names = " ".join(f"l_{i + 1:<3d}" for i in range(len(params.groups)))
    lines = [f"{names} {'L':>4} {'gamma':>10}   (γ(K_g − l_g …) = γ(l))"]
    for idx in zip(*np.nonzero(upper_mask(params)), strict=True):
        cells = " ".join(f"{int(i):<5d}" for i in idx)
        lines.append(f"{cells} {sum(int(i) for i in idx):>4d} {g[tuple(idx)]:>10.6f}")
    return "\n".join(lines)


def level_average(gamma: np.ndarray, params: GroupParams) -> np.ndarray:
    """γ̄(L) = Σ_{l : Σ_g l_g = L} h(l)·γ(l), h(l) = Π_g C(K_g, l_g)/C(K, L): what a per-group table
    does for exchangeable (e.g. i.i.d.) members, whose vote split given L is h (module docstring).
    So every i.i.d. error of the per-group table is that of the γ(L) table γ̄ (symmetric, in
    [0, 1]; γ̄ = γ for G = 1), which :func:`darrm.utility.error_curve` evaluates (``darrm evaluate``)."""
    g = np.asarray(gamma, dtype=np.float64)
    L = level_sums(params)
    out = np.bincount(L.ravel(), weights=(_split_counts(params) * g).ravel(), minlength=params.K + 1)
    return out / np.array([math.comb(params.K, k) for k in range(params.K + 1)], dtype=np.float64)
