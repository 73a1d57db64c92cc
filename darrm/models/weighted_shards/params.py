"""Parameters of a DaRRM over teachers grouped by the budget of the records they were trained on.

Individualized PATE's *weighting* model (Boenisch et al., PoPETs 2023) on disjoint shards: the
records fall into groups g with their own per-query target (ε_g, δ_g); group g has K_g members
(teachers), each trained on its own disjoint shard of group-g records only.  A record of group g
therefore changes exactly one member, a member of group g
(:attr:`~darrm.neighboring.NeighboringRelation.ONE_MEMBER_CHANGES`), and the release must be
(ε_g, δ_g)-DP for that pair.  γ reads each group's vote count: γ(l_1, …, l_G) ("per-group"), or,
with fixed vote weights w_g, only the weighted count Σ_g w_g·l_g ("weighted", a special case).
The worst case and its proof are in :mod:`darrm.models.weighted_shards`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ...errors import ParameterError
from ...neighboring import NeighboringRelation
from ...numerics.binomial import OthersPmfs, others_pmfs, others_pmfs_bytes
from ...privacy.condition import Check, GroupTargets, check
from ...validation import colon_groups, float_array, group_item
from ..disjoint.members import MemberPrivacy, member_from_dict
from ..group_lists import MemoryChecked, TargetGroup

#: how γ reads the votes: every group's count, or only the weighted count Σ_g w_g·l_g
GAMMA_FORMS = ("per-group", "weighted")

_TINY = 2.0**-1074  # the smallest subnormal

#: most budget groups: γ(l_1, …, l_G) is an array with one axis per group, and numpy's functions
#: handle at most 32 axes (more would also mean at least 2^33 cells)
MAX_GROUPS = 32


def _few_groups(name: str, groups: tuple) -> tuple:
    if len(groups) > MAX_GROUPS:
        raise ParameterError(name, f"at most {MAX_GROUPS} budget groups are supported (γ has one axis per group), "
                                   f"got {len(groups)}; merge groups with equal targets")
    return groups


@dataclass(frozen=True)
class BudgetGroup(TargetGroup):
    """K_g members trained only on the records of one budget group, owed (target_eps, target_delta)
    (validated by :class:`~darrm.models.group_lists.TargetGroup`).

    Attributes:
        size: K_g ≥ 1, the number of members trained on this group's records (one disjoint shard each).
        target_eps: the per-query ε_g > 0 owed to the group's records.
        target_delta: the per-query δ_g ∈ [0, 1).
    """

    count_field: ClassVar[str] = "size"
    size: int
    target_eps: float
    target_delta: float = 0.0


def parse_budget_groups(text: object) -> tuple[BudgetGroup, ...]:
    """Budget groups from ``size:eps:delta,size:eps:delta,…`` (``darrm solve --budget-groups``).

    Raises:
        ParameterError: naming ``budget-groups``, for a malformed item, a value out of its domain, or
            more than :data:`MAX_GROUPS` groups.
    """
    return _few_groups("budget-groups", colon_groups("budget-groups", text, "size:eps:delta", "size", BudgetGroup))


def parse_vote_weights(text: object) -> tuple[float, ...]:
    """Vote weights from ``w1,w2,…`` (``darrm solve --vote-weights``), each finite and > 0.

    Raises:
        ParameterError: naming ``vote-weights``.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParameterError("vote-weights", f"must be w1,w2,… (one positive number per group), got {text!r}")
    try:
        ws = tuple(float(t) for t in text.split(","))
    except ValueError:
        raise ParameterError("vote-weights", f"must be comma-separated numbers, got {text!r}") from None
    return _weights("vote-weights", ws)


def _weights(name: str, ws: object) -> tuple[float, ...]:
    if isinstance(ws, (str, bytes)) or not hasattr(ws, "__iter__"):
        raise ParameterError(name, f"must be a sequence of positive numbers, got {ws!r}")
    out = []
    for w in ws:
        if isinstance(w, bool) or not isinstance(w, (int, float, np.integer, np.floating)):
            raise ParameterError(name, f"must hold numbers, got {w!r}")
        if not (math.isfinite(float(w)) and float(w) > 0.0):
            raise ParameterError(name, f"every weight must be finite and > 0, got {w!r}")
        out.append(float(w))
    return tuple(out)


@dataclass(frozen=True)
class WeightedShardParams(MemoryChecked, GroupTargets):
    """Members in budget groups on disjoint shards; γ reads each group's vote count (module docstring).

    Attributes:
        member: the members' privacy with respect to their own shard (:class:`~darrm.models.disjoint.ApproxDP`,
            :class:`~darrm.models.disjoint.LocalRR` or :class:`~darrm.models.disjoint.NonPrivate`: PATE's teachers).
        groups: the budget groups (:class:`BudgetGroup` or ``(size, eps, delta)``), in the order of the
            votes' columns; the sizes sum to an odd K.
        weights: None: γ(l_1, …, l_G) reads every group's count ("per-group"); else one positive w_g
            per group: γ reads only Σ_g w_g·l_g ("weighted", the sums compared exactly).
    """

    member: MemberPrivacy
    groups: tuple[BudgetGroup, ...]
    weights: tuple[float, ...] | None = None
    _others: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _classes: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    if TYPE_CHECKING:  # the constructor takes (size, eps[, delta]) tuples too; the attribute holds BudgetGroups

        def __init__(self, member: MemberPrivacy,
                     groups: Sequence[BudgetGroup | tuple[int, float, float] | tuple[int, float]],
                     weights: Sequence[float] | None = None) -> None: ...

    #: the member model's name (:class:`darrm.member_params.MemberParams`)
    members: ClassVar[str] = "weighted-shards"
    #: the memory refusal's words (:class:`darrm.models.group_lists.MemoryChecked`)
    memory_who: ClassVar[str] = "budget groups"
    memory_for: ClassVar[str] = "for their configurations' probabilities"
    #: a record of group g changes the one member (of group g) whose shard holds it
    neighboring: ClassVar[NeighboringRelation] = NeighboringRelation.ONE_MEMBER_CHANGES

    def __post_init__(self) -> None:
        if not isinstance(self.member, MemberPrivacy):
            raise ParameterError("member", f"must be NonPrivate, ApproxDP or LocalRR, got {self.member!r}")
        if isinstance(self.groups, (str, bytes)) or not hasattr(self.groups, "__iter__"):
            raise ParameterError("groups", f"must be a sequence of budget groups, got {self.groups!r}")
        groups = tuple(group_item("groups", g, i, BudgetGroup, "size, eps, delta") for i, g in enumerate(self.groups))
        if not groups:
            raise ParameterError("groups", "must hold at least one budget group")
        _few_groups("groups", groups)
        K = sum(g.size for g in groups)
        if K % 2 == 0:
            raise ParameterError("groups", f"the group sizes must sum to an odd K (the majority has no ties), got "
                                           f"K={K}")
        object.__setattr__(self, "groups", groups)
        if self.weights is not None:
            ws = _weights("weights", self.weights)
            if len(ws) != len(groups):
                raise ParameterError("weights", f"needs one weight per group ({len(groups)}), got {len(ws)}")
            object.__setattr__(self, "weights", ws)
        if not all(self.check_for(i).rhs > 0.0 for i in range(len(groups))):
            raise ParameterError("groups", "a group's target leaves no room in float64 (e^eps - 1 + 2 delta "
                                           "below the rounding bound): raise its target_eps")

    # ------------------------------------------------------------------ shape of γ
    @property
    def K(self) -> int:
        """The number of members Σ_g K_g (odd)."""
        return sum(g.size for g in self.groups)

    @property
    def mid(self) -> int:
        """(K+1)/2: the smallest total vote count whose majority is 1."""
        return (self.K + 1) // 2

    @property
    def per_group(self) -> bool:
        """The table is γ(l_1, …, l_G) (always: the weighted form is such a table, constant on the
        classes of equal weighted count), labelled from each group's count (:mod:`darrm.models.groups.labels`)."""
        return True

    @property
    def gamma_form(self) -> str:
        """"per-group" (γ reads every group's count) or "weighted" (only Σ_g w_g·l_g)."""
        return "per-group" if self.weights is None else "weighted"

    @property
    def gamma_shape(self) -> tuple[int, ...]:
        """(K_1 + 1, …, K_G + 1)."""
        return tuple(g.size + 1 for g in self.groups)

    def weighted_classes(self) -> np.ndarray:
        """The class of every cell l of the table.

        Cells with equal min(S(l), S(K⃗) − S(l)), S(l) = Σ_g w_g·l_g summed exactly (fractions of the
        float weights), share a class; ids 0, 1, … in increasing order of that key.  Per-group form:
        every reflection pair {l, K⃗ − l} is its own class.

        Returns:
            The class ids (int64, of shape :attr:`gamma_shape`).
        """
        if "classes" not in self._classes:
            shape = self.gamma_shape
            ws = [Fraction(1)] * len(self.groups) if self.weights is None else [Fraction(w) for w in self.weights]
            if self.weights is None:  # every pair its own class: key = the C-order index of min(l, K⃗ − l)
                idx = np.arange(math.prod(shape)).reshape(shape)
                keys = np.minimum(idx, np.flip(idx))
            else:
                top = sum(w * g.size for w, g in zip(ws, self.groups, strict=True))
                S = np.empty(shape, dtype=object)
                for cell in np.ndindex(*shape):
                    s = sum((w * c for w, c in zip(ws, cell, strict=True)), Fraction(0))
                    S[cell] = min(s, top - s)
                keys = S
            uniq = sorted(set(keys.ravel().tolist()))
            pos = {k: i for i, k in enumerate(uniq)}
            self._classes["classes"] = np.vectorize(lambda k: pos[k], otypes=[np.int64])(keys)
        return self._classes["classes"]

    def validate_table(self, gamma: object) -> np.ndarray:
        """γ checked for these parameters.

        A table of shape (K_1 + 1, …, K_G + 1), finite, in [0, 1], exactly symmetric under the joint
        reflection γ(l) = γ(K⃗ − l), and (weighted form) constant on every class of equal weighted count.

        Args:
            gamma: the table.

        Returns:
            γ as a float array.

        Raises:
            ParameterError: naming ``gamma``.
        """
        g = float_array("gamma", gamma)
        if g.shape != self.gamma_shape:
            raise ParameterError("gamma", f"a per-group table must have shape {self.gamma_shape} (K_g + 1 per "
                                          f"group), got {g.shape}")
        if not np.all(np.isfinite(g)):
            raise ParameterError("gamma", "contains NaN or infinite values")
        if np.any(g < 0.0) or np.any(g > 1.0):
            raise ParameterError("gamma", "values must lie in [0, 1]")
        if not np.array_equal(g, np.flip(g)):
            raise ParameterError("gamma", "must be symmetric under the joint reflection: "
                                          "gamma[l] == gamma[K_g - l_g for every g]")
        if self.weights is not None:
            cls = self.weighted_classes().ravel()
            first = np.zeros(int(cls.max()) + 1)
            first[cls[::-1]] = g.ravel()[::-1]  # some cell's value per class
            if not np.array_equal(first[cls], g.ravel()):
                raise ParameterError("gamma", "a weighted table must be one value per weighted vote count "
                                              "sum_g w_g*l_g (equal sums, equal gamma)")
        return g

    # ------------------------------------------------------------------ the privacy tests
    def check_for(self, g: int) -> Check:
        """Constants of the rigorous float64 test (:mod:`darrm.privacy.condition`) for group g's target at K members.

        The underflow of the product evaluation is added to η as :func:`darrm.models.groups.params.group_check`
        does: η_G = (2G + 2)·Π_h(K_h + 2)·2⁻¹⁰⁷⁴ (:mod:`darrm.models.weighted_shards.certificate`).

        Args:
            g: the budget group's index.

        Returns:
            The test's constants.
        """
        grp = self.groups[g]
        base = check(grp.target_eps, grp.target_delta, self.K)
        eta_g = (2 * len(self.groups) + 2) * math.prod(h.size + 2 for h in self.groups) * _TINY
        extra = 2.0 * eta_g * (1.0 + 2.0 * base.exp_eps)
        return replace(base, slack=base.slack + extra, margin=base.margin + 4.0 * extra)


    # ------------------------------------------------------------------ the unchanged members
    def others(self, n: int) -> OthersPmfs:
        """Laws of the vote count of n unchanged members of one group (cached per n).

        Args:
            n: the number of unchanged members.

        Returns:
            The laws (:class:`~darrm.numerics.binomial.OthersPmfs`), for every number of them at the
                upper end.
        """
        if n not in self._others:
            lo, hi = self.member.unchanged_ends()
            self._others[n] = others_pmfs(n, lo, hi)
        return self._others[n]

    def configurations(self) -> int:
        """The number of configurations the certificate visits.

        Σ_g C·K_g·Π_{h≠g}(K_h + 1): (changed group, its vertex, members at the upper end per group).

        Returns:
            The count.
        """
        C = self.member.changed_vertices().shape[0]
        full = math.prod(g.size + 1 for g in self.groups)
        return sum(C * g.size * full // (g.size + 1) for g in self.groups)

    def memory(self) -> float:
        """Estimated peak bytes of one certificate.

        Per group, four probability arrays and four violation arrays over its configurations, plus the
        contraction's intermediate tables.

        Returns:
            The estimate, in bytes.
        """
        C = self.member.changed_vertices().shape[0]
        full = math.prod(g.size + 1 for g in self.groups)
        per = max(C * g.size * full // (g.size + 1) for g in self.groups)
        return float(12 * 8 * per + sum(others_pmfs_bytes(g.size) for g in self.groups))

    def check_memory(self, max_memory: float | None, need: float | None = None, what: str = "") -> float:
        """:meth:`memory` (or ``need``), refused up front when above ``max_memory`` bytes, or, when
        ``max_memory`` is None, above the memory available now
        (:func:`darrm.backends.resources.memory_limit`).

        Args:
            max_memory: the most bytes allowed; None: what is available.
            need: the estimate to check (None: :meth:`memory`, the certificate's).
            what: what needs it, for the message (default: the configurations' probabilities).

        Returns:
            The estimate checked.

        Raises:
            ParameterError: naming ``max_memory`` (the CLI's ``--max-memory``), saying how to raise it.
        """
        from ...backends import resources

        need = self.memory() if need is None else need
        what = what or "their configurations' probabilities"
        limit = resources.memory_limit(max_memory)
        if need > limit:
            allowed = "allowed" if max_memory is not None else "available"
            raise ParameterError(
                "max_memory", f"budget groups at K={self.K} ({len(self.groups)} groups) need about "
                f"{need / 2**30:.2f} GiB for {what}, more than the "
                f"{limit / 2**30:.2f} GiB {allowed}; merge groups, or raise the limit with --max-memory SIZE "
                f"(SolveOptions(max_memory=...)) at your own risk")
        return need

    # ------------------------------------------------------------------ records and files
    def file_fields(self) -> dict[str, Any]:
        """The γ file's fields for these parameters.

        Returns:
            ``{"K", "model", "budget_groups", "vote_weights"}`` with their values.
        """
        return {"K": self.K, "model": self.member.to_dict(), "budget_groups": [g.to_list() for g in self.groups],
                "vote_weights": None if self.weights is None else list(self.weights)}

    def to_dict(self) -> dict:
        """A JSON-ready description.

        Returns:
            :meth:`file_fields` with ``"members"`` and ``"gamma_form"``.
        """
        return {"members": self.members, **self.file_fields(), "gamma_form": self.gamma_form}

    @classmethod
    def file_keys(cls) -> tuple[str, ...]:
        """The keys of :meth:`file_fields`.

        Returns:
            ``("K", "model", "budget_groups", "vote_weights")``.
        """
        return ("K", "model", "budget_groups", "vote_weights")

    @classmethod
    def from_file_fields(cls, d: dict[str, Any]) -> "WeightedShardParams":
        """The inverse of :meth:`file_fields` (validated like any construction).

        Args:
            d: a γ file's fields, holding at least :meth:`file_keys`.

        Returns:
            The parameters.

        Raises:
            ParameterError: a field is out of its domain or malformed, or "K" disagrees with the groups.
        """
        groups = d["budget_groups"]
        if not isinstance(groups, list):
            raise ParameterError("budget_groups", f"must be a list of [size, eps, delta], got {groups!r}")
        ws = d["vote_weights"]
        if ws is not None and not isinstance(ws, list):
            raise ParameterError("vote_weights", f"must be a list of numbers or null, got {ws!r}")
        p = cls(member_from_dict(d["model"]), tuple(tuple(g) if isinstance(g, list) else g for g in groups),
                None if ws is None else tuple(ws))
        if d["K"] != p.K:
            raise ParameterError("K", f"is {d['K']!r} but the budget groups' sizes sum to {p.K}")
        return p

    def record_fields(self) -> dict[str, Any]:
        """The JSON record's parameter fields: the member-privacy model, the groups and the γ form.

        Returns:
            ``{"member_privacy", "budget_groups", "vote_weights", "gamma_form"}`` with their values.
        """
        return {"member_privacy": self.member.to_dict(), "budget_groups": [g.to_list() for g in self.groups],
                "vote_weights": None if self.weights is None else list(self.weights), "gamma_form": self.gamma_form}

    def describe(self) -> str:
        """One line for logs and reports.

        Returns:
            ``K=… <member model> on shards; budget groups K_g×(ε, δ) …; γ per group count | weighted``.
        """
        gs = " + ".join(f"{g.size}×({g.target_eps:g}, {g.target_delta:g})" for g in self.groups)
        form = ("gamma per group count" if self.weights is None
                else "gamma of the weighted count with weights " + ", ".join(f"{w:g}" for w in self.weights))
        return (f"K={self.K} {self.member.describe()} on one-group shards; budget groups size×(target ε, δ): "
                f"{gs}; {form}")
