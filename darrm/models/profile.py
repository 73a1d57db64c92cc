"""The exact privacy profile of one DaRRM_γ query, for any member model.

Checks the arguments once and asks the table's member model
(:meth:`darrm.models.base.MemberModel.profile`); the claims, their proofs and the outward rounding
are in :mod:`darrm.privacy.profile` (members on shared data) and in each model's own profile module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..backends.executors import check_executor
from ..errors import ParameterError
from ..member_params import MemberParams
from ..privacy.certify import validate_max_memory
from ..table import GammaTable
from ..validation import choice
from . import model_of

if TYPE_CHECKING:
    from ..backends import Executor, TorchDevice
    from ..privacy.profile import PrivacyProfile


def privacy_profile(
    table: GammaTable | np.ndarray,
    params: MemberParams | None = None,
    *,
    executor: Executor | TorchDevice | None = None,
    method: str = "auto",
    max_memory: float | None = None,
) -> PrivacyProfile:
    """The exact privacy profile of one DaRRM_γ query, rounded outward, with its dominating pair.

    Args:
        table: a :class:`~darrm.GammaTable` (its parameters are used) or a γ array (then
            ``params`` is required).
        params: any registered member model's parameters (:mod:`darrm.models`):
            :class:`~darrm.PrivacyParams` (members on shared data; only K, ε and Δ matter: the profile
            is over every ε′), :class:`~darrm.DisjointParams` (disjoint shards),
            :class:`~darrm.GroupParams` (groups of their own budgets, either γ form; in this
            process: "direct" visits every configuration, "sweep" runs the factorised sweep),
            :class:`~darrm.ShardGroupParams` (records copied into r_g shards: the profile every record
            meets, the largest of the record groups' own profiles,
            :func:`darrm.models.shard_groups.profile.record_group_profiles`; in this process) or
            :class:`~darrm.WeightedShardParams` (budget groups on one-group shards: the profile
            every record meets; in this process).
        executor: where the sweep's blocks run (serial, processes, Dask, a torch device); default:
            as many local processes as fit (:func:`darrm.privacy.sweep.sweep_executor`).
        method: "auto" (direct enumeration up to
            :data:`~darrm.privacy.profile.DIRECT_MAX_MULTISETS` multisets, else the sweep), "direct"
            or "sweep" (shared and grouped members; the other models always visit their O(K)
            configurations).
        max_memory: the sweep's memory budget in bytes (None: the memory available).

    Returns:
        The :class:`~darrm.privacy.profile.PrivacyProfile` (Claims 1 and 2 of
        :mod:`darrm.privacy.profile`).

    Raises:
        ParameterError: bad arguments, or the sweep does not fit the memory budget.
    """
    gamma: Any
    if isinstance(table, GammaTable):
        if params is not None and (not isinstance(params, MemberParams) or params != table.params):
            raise ParameterError("params", "differs from the table's parameters; pass one or the other")
        params, gamma = table.params, table.gamma
    else:
        gamma = table
        if params is None:
            raise ParameterError("table", f"must be a darrm.GammaTable, or a γ array with params, got {table!r}")
    model = model_of(params)
    model.require("profile", "params")
    choice("method", method, ("auto", "direct", "sweep"))
    check_executor("executor", executor)
    max_memory = validate_max_memory(max_memory)
    return model.profile(gamma, params, executor, method, max_memory)
