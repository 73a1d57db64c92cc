"""Parameters of a DaRRM over heterogeneous members on shared data: groups with their own budgets.

Every member may depend on the changed record (Problem 1.1's neighbouring relation), but group g's
K_g members are (ε_g, Δ_g)-DP, budgets that differ from group to group (teachers trained with
different noise, data owners choosing their own ε).  The release is certified against a per-query
target (ε, δ), as for members on disjoint shards (:class:`darrm.DisjointParams`).

**Why the worst case is one corner multiset per group.**  Lemma 3.4 (Eq. 1) says DaRRM_γ is
(ε, δ)-DP iff f(p, p′; γ) = Pr[A(D) = o] − e^ε·Pr[A(D′) = o] − δ ≤ 0 for both outputs o, both
directions, and every admissible (p_i, p′_i)_i.  With the other members fixed, the vote-count
pmfs α = PB(p) and α′ = PB(p′) are affine in member i's pair (p_i, p′_i) (the Poisson-binomial
pmf is L = S_i + L_{−i}, a mixture with weights p_i, 1 − p_i), and Pr[A = o] is linear in
(α, α′); so f is affine in (p_i, p′_i) and its maximum over member i's own region F(ε_g, Δ_g)
(:mod:`darrm.privacy.corners`, Appendix C.3 Part I) is attained at one of that region's
vertices — with every other member anywhere.  Applying this member by member puts every member at
a vertex of its *own* region.  The vote count L = Σ_g L_g is invariant under permuting members of
the same group (jointly in p and p′), so only the multiset of corners *within each group* matters
(Part II applied group by group): the configurations are the product over groups of
C(K_g + C_g − 1, C_g − 1) multisets, C_g = 8 corners when Δ_g > 0 and 4 when Δ_g = 0 (Lemma 5.1's
count, group by group).  Members of different groups can *not* be exchanged (their regions
differ), so the product does not shrink further.

**One inequality family.**  Every region F(ε_g, Δ_g) is closed under the swap (p, p′) → (p′, p)
and the reflection (p, p′) → (1 − p, 1 − p′).  Applying the swap to every member at once exchanges
D and D′; the reflection to every member at once maps L to K − L, and for a symmetric γ
(γ(l) = γ(K − l)) Pr[A = 0] under the reflected configuration equals Pr[A = 1] under the original.
Both maps send the product of the groups' corner sets onto itself, so the set of configurations
is closed under both, and the rows of one direction and one output, over all configurations,
imply the other three (the certificate nevertheless evaluates all four, :mod:`darrm.models.groups.certificate`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ...errors import ParameterError
from ...gamma import validate_gamma
from ...member_params import TargetQueryBudget
from ...neighboring import NeighboringRelation
from ...privacy.condition import Check, check, rhs
from ...privacy.corners import corner_count, multiset_count
from ...validation import choice, colon_groups, count, epsilon, float_array, group_item, half_open_unit

#: the grouped members' round limit when ``SolveOptions.max_rounds`` is None
#: (:attr:`darrm.models.base.MemberModel.max_rounds`): a round sweeps every configuration of the groups' corners
MAX_ROUNDS = 500

#: how γ reads the votes: "total" (γ(L), the paper's form) or "per-group" (γ(l_1, …, l_G),
#: :mod:`darrm.models.groups.per_group`)
GAMMA_FORMS = ("total", "per-group")


@dataclass(frozen=True)
class MemberGroup:
    """K_g members of one budget: each is (eps, Delta)-DP.

    Attributes:
        size: the number of members K_g ≥ 1.
        eps: their per-member ε_g > 0.
        Delta: their per-member Δ_g ∈ [0, 1).
    """

    size: int
    eps: float
    Delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", count("size", self.size, 1))
        object.__setattr__(self, "eps", epsilon("eps", self.eps))
        object.__setattr__(self, "Delta", half_open_unit("Delta", self.Delta))

    @property
    def corners(self) -> int:
        """C_g: the vertices of the group's region, 8 when Δ_g > 0 and 4 when Δ_g = 0 (Lemma 5.1)."""
        return corner_count(self.Delta)

    @property
    def multisets(self) -> int:
        """C(K_g + C_g − 1, C_g − 1): the group's corner multisets."""
        return multiset_count(self.size, self.corners)

    def to_list(self) -> list:
        """The group as stored in γ files and JSON records.

        Returns:
            ``[size, eps, Delta]``.
        """
        return [self.size, self.eps, self.Delta]


def parse_groups(text: object) -> tuple[MemberGroup, ...]:
    """Groups from ``count:eps:Delta,count:eps:Delta,…`` (``darrm solve --groups``).

    Raises:
        ParameterError: naming ``groups``, for a malformed item or a value out of its domain.
    """
    return colon_groups("groups", text, "count:eps:Delta", "count", MemberGroup)


def _as_group(g: object, i: int) -> MemberGroup:
    return group_item("groups", g, i, MemberGroup, "size, eps, Delta")


@dataclass(frozen=True)
class GroupParams(TargetQueryBudget):
    """Members on shared data in groups of different budgets; a per-query target (ε, δ).

    Attributes:
        groups: the member groups, each a :class:`MemberGroup` or ``(size, eps, Delta)``; the
            members of group g are (ε_g, Δ_g)-DP.  Their sizes sum to K, which must be odd.
        target_eps: the per-query ε of one release (> 0).
        target_delta: the per-query δ ∈ [0, 1), at least the largest Δ_g (a single member of
            group g already leaks Δ_g).
        gamma_form: how γ reads the votes: "total" (γ(L), the paper's form; a table of K + 1
            entries) or "per-group" (γ(l_1, …, l_G), each group's vote count, symmetric under the
            joint reflection; a table of shape (K_1 + 1, …, K_G + 1), :mod:`darrm.models.groups.per_group`).

    Raises:
        ParameterError: naming ``groups``, ``target_eps``, ``target_delta`` or ``gamma_form``.
    """

    groups: tuple[MemberGroup, ...]
    target_eps: float
    target_delta: float = 0.0
    gamma_form: str = "total"

    if TYPE_CHECKING:  # the constructor takes (size, eps[, Delta]) tuples too; the attribute holds MemberGroups

        def __init__(self, groups: Sequence[MemberGroup | tuple[int, float, float] | tuple[int, float]],
                     target_eps: float, target_delta: float = 0.0, gamma_form: str = "total") -> None: ...

    def __post_init__(self) -> None:
        if not isinstance(self.groups, (tuple, list)) or len(self.groups) == 0:
            raise ParameterError("groups", f"must be a non-empty sequence of groups, got {self.groups!r}")
        groups = tuple(_as_group(g, i) for i, g in enumerate(self.groups))
        K = sum(g.size for g in groups)
        if K % 2 == 0:
            raise ParameterError("groups", f"the group sizes must sum to an odd K, got K={K}")
        eps = epsilon("target_eps", self.target_eps)
        delta = half_open_unit("target_delta", self.target_delta)
        worst = max(g.Delta for g in groups)
        if delta < worst:
            raise ParameterError("target_delta", f"must be >= the largest member Delta={worst!r}, got {delta!r}")
        choice("gamma_form", self.gamma_form, GAMMA_FORMS)
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "target_eps", eps)
        object.__setattr__(self, "target_delta", delta)

    #: the member model's name (:class:`darrm.member_params.MemberParams`)
    members: ClassVar[str] = "groups"
    #: every member may depend on the changed record (Problem 1.1), whatever its group
    neighboring: ClassVar[NeighboringRelation] = NeighboringRelation.EVERY_MEMBER_SEES_RECORD

    @property
    def K(self) -> int:
        """The number of members Σ_g K_g (odd)."""
        return sum(g.size for g in self.groups)

    @property
    def mid(self) -> int:
        """(K+1)/2: the smallest vote count whose majority is 1."""
        return (self.K + 1) // 2

    @property
    def check(self) -> Check:
        """Constants of the rigorous float64 test (:mod:`darrm.privacy.condition`) for the target,
        with the slack widened for the product evaluation (:func:`group_check`)."""
        return group_check(self)

    @property
    def rhs(self) -> float:
        """Right-hand side of the folded rows (Lemma 3.4, Eq. 1): e^ε − 1 + 2δ."""
        return rhs(self.target_eps, self.target_delta)

    @property
    def configurations(self) -> int:
        """Π_g C(K_g + C_g − 1, C_g − 1): the corner-multiset configurations the certificate checks."""
        return math.prod(g.multisets for g in self.groups)

    def base_check(self) -> Check:
        """:func:`darrm.privacy.condition.check` for the target at K members (before the product's slack).

        Returns:
            The constants of the rigorous float64 test for (target_eps, target_delta) at K members.
        """
        return check(self.target_eps, self.target_delta, self.K)

    def to_dict(self) -> dict:
        """A JSON-ready description (tables' and sessions' records).

        "gamma_form" is written only for the per-group form, so that γ(L) tables keep their identity.

        Returns:
            ``{"members": "groups", **file_fields()}``.
        """
        return {"members": "groups", **self.file_fields()}

    @property
    def per_group(self) -> bool:
        """γ reads each group's vote count (``gamma_form == "per-group"``)."""
        return self.gamma_form == "per-group"

    @property
    def gamma_shape(self) -> tuple[int, ...]:
        """The γ table's shape: (K + 1,), or (K_1 + 1, …, K_G + 1) per group."""
        return tuple(g.size + 1 for g in self.groups) if self.per_group else (self.K + 1,)

    def validate_table(self, gamma: object) -> Any:
        """γ checked for this form (:func:`darrm.models.groups.per_group.validate_group_gamma`).

        Args:
            gamma: a γ(L) vector (length K+1) or, for the per-group form, a γ(l_1, …, l_G) array.

        Returns:
            γ as a float array of the form's shape.

        Raises:
            ParameterError: naming ``gamma``.
        """
        return validate_group_gamma(gamma, self)

    def file_fields(self) -> dict[str, Any]:
        """The γ file's fields for these parameters.

        "groups" is [[size, eps, Delta], …]; "gamma_form" only for the per-group form, so that γ(L)
        files read as before.

        Returns:
            ``{"K", "groups", "target_eps", "target_delta"}`` (and ``"gamma_form"``) with their values.
        """
        d: dict[str, Any] = {"K": self.K, "groups": [g.to_list() for g in self.groups],
                             "target_eps": self.target_eps, "target_delta": self.target_delta}
        if self.per_group:
            d["gamma_form"] = self.gamma_form
        return d

    @classmethod
    def file_keys(cls) -> tuple[str, ...]:
        """The keys of :meth:`file_fields` that every γ file of groups has.

        Returns:
            ``("K", "groups", "target_eps", "target_delta")``.
        """
        return ("K", "groups", "target_eps", "target_delta")

    @classmethod
    def from_file_fields(cls, d: dict[str, Any]) -> "GroupParams":
        """The inverse of :meth:`file_fields` (validated like any construction).

        Args:
            d: a γ file's fields, holding at least :meth:`file_keys`.

        Returns:
            The parameters.

        Raises:
            ParameterError: a field is out of its domain, or "K" disagrees with the groups.
        """
        if not isinstance(d["groups"], list):
            raise ParameterError("groups", f"must be a list of [size, eps, Delta], got {d['groups']!r}")
        groups = tuple(_as_group(tuple(g) if isinstance(g, list) else g, i) for i, g in enumerate(d["groups"]))
        p = cls(groups, d["target_eps"], d["target_delta"], d.get("gamma_form", "total"))
        if d["K"] != p.K:
            raise ParameterError("K", f"is {d['K']!r} but the groups' sizes sum to {p.K}")
        return p

    def record_fields(self) -> dict[str, Any]:
        """The JSON record's parameter fields: the groups and the γ form.

        Returns:
            ``{"groups": [[size, eps, Delta], …], "gamma_form": …}``.
        """
        return {"groups": [g.to_list() for g in self.groups], "gamma_form": self.gamma_form}

    def describe(self) -> str:
        """One line for logs and reports.

        Returns:
            ``K=… in groups size×(ε, Δ) + …, target (ε, δ)``.
        """
        gs = " + ".join(f"{g.size}×(eps={g.eps:g}, Delta={g.Delta:g})" for g in self.groups)
        form = ", gamma per group count" if self.per_group else ""
        return f"K={self.K} in groups {gs}, target eps={self.target_eps:g}, delta={self.target_delta:.6g}{form}"


_TINY = 2.0**-1074  # the smallest subnormal


def group_check(params: GroupParams) -> Check:
    """The rigorous test's constants for the target at K members (:func:`darrm.privacy.condition.check`),
    with η_G = [(2G + 2)·Π_g(K_g + 2) + 40(K + 2)²]·2⁻¹⁰⁷⁴ (what gradual underflow can cost the
    exhaustive product evaluation, :mod:`darrm.models.groups.certificate`, plus what it can cost the
    factorised sweep, :mod:`darrm.models.groups.sweep`) added to η in the slack's form 2η(1 + 2e^ε) and to
    the repair margin."""
    base = params.base_check()
    eta_g = ((2 * len(params.groups) + 2) * math.prod(g.size + 2 for g in params.groups)
             + 40 * (params.K + 2) ** 2) * _TINY
    extra = 2.0 * eta_g * (1.0 + 2.0 * base.exp_eps)
    return replace(base, slack=base.slack + extra, margin=base.margin + 4.0 * extra)


def validate_joint_gamma(gamma: object, params: GroupParams, *, name: str = "gamma") -> np.ndarray:
    """Check a per-group table: shape (K_1 + 1, …, K_G + 1), finite, in [0, 1], and exactly
    symmetric under the joint reflection γ(l) = γ(K⃗ − l).

    Raises:
        ParameterError: naming ``name``.
    """
    g = float_array(name, gamma)
    shape = tuple(gr.size + 1 for gr in params.groups)
    if g.shape != shape:
        raise ParameterError(name, f"a per-group table must have shape {shape} (K_g + 1 per group), got {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ParameterError(name, "contains NaN or infinite values")
    if np.any(g < 0.0) or np.any(g > 1.0):
        raise ParameterError(name, "values must lie in [0, 1]")
    if not np.array_equal(g, np.flip(g)):
        raise ParameterError(name, "must be symmetric under the joint reflection: "
                                   "gamma[l] == gamma[K_g - l_g for every g]")
    return g


def validate_group_gamma(gamma: object, params: GroupParams, *, name: str = "gamma") -> np.ndarray:
    """A γ table of the parameters' form: γ(0..K) (:func:`darrm.gamma.validate_gamma`) or a
    per-group table (:func:`validate_joint_gamma`).

    Raises:
        ParameterError: naming ``name``.
    """
    if params.per_group:
        return validate_joint_gamma(gamma, params, name=name)
    return validate_gamma(gamma, params.K, name=name)
