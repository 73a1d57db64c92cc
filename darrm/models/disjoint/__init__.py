"""Partition-aware DaRRM: members trained on *disjoint* shards.

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

from .certificate import DIRECTIONS, certify_disjoint, constraint_row, violations
from .members import (
    ApproxDP,
    LocalRR,
    MemberPrivacy,
    NonPrivate,
    member_from_dict,
    parse_member,
)
from .params import DisjointParams
from .solver import solve_gamma_opt_disjoint

__all__ = [
    "DIRECTIONS", "ApproxDP", "DisjointParams", "LocalRR", "MemberPrivacy", "NonPrivate",
    "certify_disjoint", "constraint_row", "member_from_dict", "parse_member", "solve_gamma_opt_disjoint",
    "violations",
]
