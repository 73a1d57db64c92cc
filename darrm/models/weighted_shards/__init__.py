"""DaRRM for teachers grouped by the budget of their records, γ reading each group's votes.

Individualized PATE's *weighting* model (Boenisch et al., PoPETs 2023), on disjoint shards:
records fall into budget groups g, each owed its own per-query target (ε_g, δ_g); group g has K_g
members, each trained on its own disjoint shard of group-g records only (one copy of each record).
GNMax weights the votes of a group by w_g; here γ itself reads the groups' vote counts
l = (l_1, …, l_G) (:class:`WeightedShardParams`):

* **per-group**: any symmetric γ(l_1, …, l_G) (Lemma 3.3 lets γ read the whole vote vector,
  :mod:`darrm.models.groups.per_group`);
* **weighted**: γ reads only the weighted count S(l) = Σ_g w_g·l_g, γ(l) = h(S(l)) with
  h(S) = h(S(K⃗) − S) — the special case of fixed vote weights.

Either way the mechanism releases the majority of all K votes, 1{Σ_g l_g ≥ mid}, with probability
γ(l), else a fair coin (Algorithm 1 with γ read per group); a *weighted* majority release is a
different mechanism (the general Pr[A = 1 | l] LP), not built here.  K = Σ_g K_g is odd.

**The privacy requirement.**  A neighbouring pair D, D′ replaces one record of group g, so only
the member of group g whose shard holds it may change its vote law (the partition into shards is
fixed independently of the records' values).  For every group g, both outputs o and both
directions, Pr[A(D) = o] ≤ e^{ε_g}·Pr[A(D′) = o] + δ_g.

**Reduction (proof).**  Fix g and the changed member i (of group g).  The votes are independent;
S_i ~ Bern(p_i) under D, Bern(p′_i) under D′, every other member j has S_j ~ Bern(p_j) under
both.  With W(l) = Pr[A = 1 | l] (:func:`darrm.models.groups.per_group.joint_weights`),

    Pr[A(D) = 1] = Σ_l Pr[l]·W(l), Pr[l] = Π_h Pr[l_h],

and the law of (l_1, …, l_G) is a product of the groups' laws, each the law of a sum of
independent Bernoullis, so Pr[A(D) = o] is multilinear in (p_j)_j and affine in p_i.  The cost
c = Pr[A(D)=o] − e^{ε_g}·Pr[A(D′)=o] − δ_g is therefore

(a) affine in the *pair* (p_i, p′_i) with everything else fixed (the first term reads p_i only, the
    second p′_i only), so its maximum over the member's region F is at one of F's C vertices
    (:meth:`~darrm.models.disjoint.MemberPrivacy.changed_vertices`);
(b) affine in each unchanged p_j (= p′_j), so member by member every unchanged member may be put at
    an end lo or hi of its interval (:meth:`~darrm.models.disjoint.MemberPrivacy.unchanged_ends`) without
    lowering the maximum — the disjoint members' worst case over the unchanged members
    (:mod:`darrm.models.disjoint`);
(c) invariant under permuting the members *within* each group (γ reads only the counts l_h), so
    only the number n_h of each group's unchanged members at hi matters: l_h ~ Bin(n_h, hi) ⊕
    Bin(K_h − n_h, lo) for h ≠ g, and l_g = S_i + Bin(n_g, hi) ⊕ Bin(K_g − 1 − n_g, lo).

Hence the worst case over every admissible ensemble is the maximum over (g, vertex of F,
n_g ∈ {0..K_g − 1}, n_h ∈ {0..K_h} for h ≠ g, o, direction): 4·C·K_g·Π_{h≠g}(K_h + 1) numbers
per group.  The two outputs and two directions are all kept (four rows per configuration, no
folding by symmetry is assumed), and every configuration's output probabilities are linear in γ, so
γ_opt is an LP with these rows (Lemma 3.4's folded form over the per-group cells,
:func:`darrm.models.groups.per_group.joint_folded_rows`, with group g's e^{ε_g}; each row divided by its
own e^{ε_g} − 1 + 2δ_g so that every right-hand side is 1).  G = 1 is :mod:`darrm.models.disjoint`
(same configurations, same rows up to that scale).

**Nesting.**  The weighted form is the per-group LP restricted to the tables constant on the classes
of equal min(S, S(K⃗) − S) (x_per-group = M·x_weighted, M a 0/1 matrix): its optimum is never below
the per-group optimum.  The per-group LP itself contains every γ(L) (γ(l) = γ_L(Σ_g l_g)), in
particular DaRRM at the worst budget.

**Rigorous float64.**  Each group's count law is built by the non-negative recurrences of
:func:`darrm.numerics.binomial.others_pmfs` (windows; the left-out mass, summed over the groups,
is added to every bound — a union bound on the product law's mass outside the windows), the
changed member's vote by one more step π ← q·π + p·shift(π) with the vertices' closed-form
complements.  The output probability Σ_l Π_h α_h[l_h]·W(l) is contracted group by group
(:func:`darrm.models.groups.contraction.contract`, non-negative terms only; Pr[A = 0] with W flipped,
never 1 − Pr[A = 1]).  Roundings per probability: the group laws ≤ Σ_h(10K_h + 1), the changed
member's step 9, one product and one sum of ≤ K_h + 1 terms per group, W's 3: ≤ 11K + 3G + 12 ≤
16(K + 2), so ρ(K) of :mod:`darrm.privacy.condition` bounds every probability's relative error;
gradual underflow adds ≤ (2G + 2)·Π_h(K_h + 2)·2⁻¹⁰⁷⁴ to η (:meth:`WeightedShardParams.check_for`).
The certificate reports max_g 2·v̂_g / rhs_g (each group's bound in units of its own room), whose
sign is the verdict and which one repair factor fixes for every group.
"""

from .certificate import certify_weighted_shards, constraint_row, lp_variables, violations
from .params import BudgetGroup, WeightedShardParams, parse_budget_groups, parse_vote_weights
from .solver import all_rows, solve_gamma_opt_weighted_shards, table_form

__all__ = [
    "BudgetGroup", "WeightedShardParams", "certify_weighted_shards", "constraint_row", "all_rows",
    "lp_variables", "parse_budget_groups", "parse_vote_weights", "solve_gamma_opt_weighted_shards", "table_form",
    "violations",
]
