"""DaRRM for members on shards whose records carry per-group budgets.

Individualized PATE's *upsampling* (Boenisch et al., PoPETs 2023): records fall into groups g,
each owed its own per-query target (ε_g, δ_g), and each record of group g is copied into the
shards of r_g distinct members (a group with a larger budget is seen by more teachers).  The
members are described by one member-privacy model of :mod:`darrm.models.disjoint.members`: the
region F of (p_i, p′_i) of a member whose shard changes (C vertices) and the interval
[lo, hi] of p_j = p′_j of a member whose shard does not.  r_g = 1 for every group is
:mod:`darrm.models.disjoint` with one target per group.

**The privacy requirement.**  A neighbouring pair D, D′ replaces one record of group g; only
the r_g members holding its copies may change their vote law.  The assignment of copies to
members is fixed independently of the records' values (or drawn independently of them: the
release is then a mixture, over assignments, of mechanisms that each meet the bound below, and a
mixture of such laws meets it too).  DaRRM_γ (Algorithm 1) must satisfy, for every group g,
both outputs o ∈ {0, 1} and both directions,

    Pr[A(D) = o] ≤ e^{ε_g}·Pr[A(D′) = o] + δ_g.

**Reduction (proof).**  Fix g and let S be the set of r = r_g changed members.  The vote count is
L = Y + X with Y = Σ_{i∈S} S_i and X = Σ_{j∉S} S_j, all votes independent (each member's own
randomness), S_i ~ Bern(p_i) under D and Bern(p′_i) under D′, S_j ~ Bern(p_j) under both.  With
w_l = Pr[A = 1 | L = l] (:func:`darrm.mechanism.output_weights`; w_{K−l} for o = 0),

    Pr[A(D) = o] = E[w_{Y+X}] is multilinear in (p_i)_{i∈S} and in (p_j)_{j∉S},

because the law of a sum of independent Bernoullis is a product measure.  So the cost
c = Pr[A(D)=o] − e^{ε_g}·Pr[A(D′)=o] − δ_g is

(a) for each changed member i, with every other member fixed, affine in the *pair* (p_i, p′_i):
    the first term is affine in p_i and does not involve p′_i, the second the reverse.  The
    maximum of an affine function over the convex polygon F is attained at a vertex, so,
    member by member (each step keeps the others fixed and cannot lower the maximum), some worst
    configuration has every changed member at a vertex of F — a tuple of r vertices;
(b) for each unchanged member j, affine in p_j (= p′_j), so the maximum over [lo, hi] is at an
    end, and member by member every unchanged member may be put at lo or hi;
(c) invariant under permuting the changed members among themselves and the unchanged members
    among themselves (L is a sum), so only the *multiset* of the r changed members' vertices and
    the number n ∈ {0..K−r} of unchanged members at hi matter: X ~ Bin(n, hi) ⊕ Bin(K−r−n, lo).

Hence the worst case over every admissible ensemble is the maximum over (multiset of r_g
vertices, n, o, direction): 4·C(r_g + C − 1, C − 1)·(K − r_g + 1) numbers per group —
O(K·C(r_g + C − 1, C − 1)), linear in K for fixed copies.  Each is linear in γ (every output
probability is), so γ_opt is an LP with these rows (Lemma 3.4's folded form,
:func:`darrm.privacy.condition.folded_rows`, with group g's e^{ε_g}; each row divided by its own
e^{ε_g} − 1 + 2δ_g so that every right-hand side is 1).

**Rigorous float64.**  The changed members' count law is built per multiset by the non-negative
recurrence π ← q·π + p·shift(π) with the vertices' closed-form complements; the unchanged
members' law by :func:`darrm.numerics.binomial.others_pmfs` (windows, their left-out mass added
to every bound); the output probability is Σ_y π_y·E[w_{X+y}], a sum of non-negative terms.  A
configuration has K members in all, with the same kinds of factors and operations as the
disjoint certificate (recurrence of degree r and of degree K − r, one convolution-like sum over
X, one dot product of r + 1 terms), so its relative error is within ρ(K) of
:mod:`darrm.privacy.condition`, whose test decides each group's verdict with group g's own
constants (:meth:`ShardGroupParams.check_for`).  The certificate reports max_g 2·v̂_g / rhs_g
(each group's bound in units of its own room), whose sign is the verdict and which one scale
factor repairs for every group (:attr:`ShardGroupParams.check`).
"""

from .certificate import certify_shard_groups, constraint_row, vertex_multisets, violations
from .params import RecordGroup, ShardGroupParams, parse_record_groups
from .profile import record_group_profiles
from .solver import all_rows, solve_gamma_opt_shard_groups

__all__ = [
    "RecordGroup", "ShardGroupParams", "certify_shard_groups", "constraint_row", "all_rows",
    "parse_record_groups", "record_group_profiles", "solve_gamma_opt_shard_groups", "vertex_multisets",
    "violations",
]
