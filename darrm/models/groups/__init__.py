"""Heterogeneous members on shared data: groups of members with their own (ε_g, Δ_g) budgets.

:class:`GroupParams` (the parameters, and the proof that one corner multiset per group is the
worst case), :func:`certify_groups` (the rigorous certificate over the product of the groups'
corner multisets) and :func:`darrm.models.groups.solver.solve_gamma_opt_groups` (γ_opt(L), the paper's
form, certified with a proven gap; imported when a solve runs, so that loading a table imports no
LP library).  :class:`darrm.models.groups.model.GroupsModel` is the model's one class (:mod:`darrm.models`).
"""

from .certificate import certify_groups
from .params import GroupParams, MemberGroup, parse_groups

__all__ = ["GroupParams", "MemberGroup", "certify_groups", "parse_groups"]
