"""The one dispatch point: every member model and every γ family meet here.

``solve``, ``certify``, ``family_gamma`` and ``check_request`` are the only functions that
choose between member models; they look the model up in :data:`MEMBER_MODELS` by the type of
the parameters (never by ``isinstance`` chains elsewhere) and the family in
:mod:`darrm.families`.  Below this module, :mod:`darrm.solver` knows shared members only and
:mod:`darrm.disjoint` disjoint members only.  The solvers are imported when a solve runs, so
that loading or verifying a table imports no LP library.

A new member model (groups, classes) is a parameters type implementing
:class:`darrm.member_params.MemberParams`, a certificate, a request check, a solver and one
:class:`MemberModel` entry here (docs/contributing.md).
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import families
from .backends.executors import check_executor
from .disjoint.certificate import certify_disjoint
from .disjoint.params import DisjointParams
from .errors import DarrmError, ParameterError, SolveError
from .gamma import const_assumptions
from .groups.params import GroupParams
from .member_params import MemberParams
from .params import PrivacyParams
from .prior import IIDPrior, Prior
from .privacy.certify import Certificate, validate_max_memory, validate_tol
from .privacy.certify import certify as certify_shared
from .shard_groups.params import ShardGroupParams
from .solver.options import SolveOptions
from .table import GammaTable, validate_table_gamma
from .validation import count, flag, function, instance, path, positive
from .weighted_shards.params import WeightedShardParams

if TYPE_CHECKING:
    from .backends import Executor, TorchDevice
    from .budget.spec import TotalBudget

FAMILIES: tuple[str, ...] = families.names()
"""The γ families [solve][darrm.solve] knows, as registered when darrm was imported: "opt" (γ_opt,
the LP of Section 5) and the closed forms "sub" (γ_Sub, Lemma 3.1), "dsub" (the 2m−1 subsampling γ
of Theorem 4.1) and "const" (randomised response, Lemma A.1).  ``darrm.families`` is the registry."""


# ----------------------------------------------------------------------------- member models
def _check_shared(*args: Any) -> None:
    from .solver.request import check_shared

    check_shared(*args)


def _check_disjoint(*args: Any) -> None:
    from .disjoint.request import check_disjoint

    check_disjoint(*args)


def _check_shard_groups(*args: Any) -> None:
    from .shard_groups.request import check_shard_groups

    check_shard_groups(*args)


def _solve_shard_groups(params: Any, prior: Prior, family: families.Family, opts: SolveOptions, executor: Any,
                        checkpoint: Path | None, progress: bool | None,
                        log: Callable[[str], None] | None) -> GammaTable:
    from .shard_groups.solver import solve_gamma_opt_shard_groups

    return solve_gamma_opt_shard_groups(params, prior, options=opts, log=log)


def _certify_shard_groups(gamma: np.ndarray, params: Any, tol: float, progress: bool | None,
                          max_memory: float | None, executor: Any = None) -> Certificate:
    # O(K) configurations per record group in this process: the executor is not used
    from .shard_groups.certificate import certify_shard_groups

    return certify_shard_groups(gamma, params, tol=tol, max_memory=max_memory)


def _solve_weighted_shards(params: Any, prior: Prior, family: families.Family, opts: SolveOptions, executor: Any,
                           checkpoint: Path | None, progress: bool | None,
                           log: Callable[[str], None] | None) -> GammaTable:
    from .weighted_shards.solver import solve_gamma_opt_weighted_shards

    return solve_gamma_opt_weighted_shards(params, prior, options=opts, log=log)


def _certify_weighted_shards(gamma: np.ndarray, params: Any, tol: float, progress: bool | None,
                             max_memory: float | None, executor: Any = None) -> Certificate:
    # one contraction per budget group in this process: the executor is not used
    from .weighted_shards.certificate import certify_weighted_shards

    return certify_weighted_shards(gamma, params, tol=tol, max_memory=max_memory)


def _check_weighted_shards(*args: Any) -> None:
    from .weighted_shards.request import check_weighted_shards

    check_weighted_shards(*args)


def _check_groups(*args: Any) -> None:
    from .groups.request import check_groups

    check_groups(*args)


def _solve_shared(params: Any, prior: Prior, family: families.Family, opts: SolveOptions, executor: Any,
                  checkpoint: Path | None, progress: bool | None, log: Callable[[str], None] | None) -> GammaTable:
    from .solver.request import solve_shared

    return solve_shared(params, prior, family, opts, executor, checkpoint, progress, log)


def _solve_disjoint(params: Any, prior: Prior, family: families.Family, opts: SolveOptions, executor: Any,
                    checkpoint: Path | None, progress: bool | None, log: Callable[[str], None] | None) -> GammaTable:
    from .disjoint.solver import solve_gamma_opt_disjoint

    return solve_gamma_opt_disjoint(params, prior, options=opts, log=log)


def _solve_groups(params: Any, prior: Prior, family: families.Family, opts: SolveOptions, executor: Any,
                  checkpoint: Path | None, progress: bool | None, log: Callable[[str], None] | None) -> GammaTable:
    from .groups.solver import solve_gamma_opt_groups

    return solve_gamma_opt_groups(params, prior, options=opts, log=log)


def _certify_groups(gamma: np.ndarray, params: Any, tol: float, progress: bool | None,
                    max_memory: float | None, executor: Any = None) -> Certificate:
    # the groups' corner product is streamed in blocks in this process: the executor is not used
    from .groups.certificate import certify_groups

    return certify_groups(gamma, params, tol=tol, max_memory=max_memory)


def _certify_shared(gamma: np.ndarray, params: Any, tol: float, progress: bool | None,
                    max_memory: float | None, executor: Any = None) -> Certificate:
    return certify_shared(gamma, params, tol=tol, progress=progress, max_memory=max_memory, executor=executor)


def _certify_disjoint(gamma: np.ndarray, params: Any, tol: float, progress: bool | None,
                      max_memory: float | None, executor: Any = None) -> Certificate:
    # O(K) vertices in this process: there is nothing to distribute, so the executor is not used
    return certify_disjoint(gamma, params, tol=tol, max_memory=max_memory)


def _error_levels(gamma: np.ndarray, params: Any, prior: Prior) -> float:
    """A γ(0..K) table's expected error under ``prior`` (Eq. 2's objective,
    :func:`darrm.solver.objective.expected_signed_error`): every model whose γ reads the vote count L."""
    from .solver.objective import expected_signed_error

    return expected_signed_error(gamma, prior)


def _error_groups(gamma: np.ndarray, params: Any, prior: Prior) -> float:
    """A grouped table's expected error (grouped members, teachers of one budget group each):
    γ(L) as :func:`_error_levels`, γ(l_1, …, l_G) — weighted tables too, which are stored per group
    count — by :func:`darrm.groups.per_group.joint_expected_error` (the objective its LP minimises)."""
    if not params.per_group:
        return _error_levels(gamma, params, prior)
    from .groups.per_group import joint_expected_error

    return joint_expected_error(gamma, params, prior)


@dataclass(frozen=True)
class MemberModel:
    """One member model: its parameters type and what certifies and solves for it.

    Attributes:
        name: the model's name (``params.members``; ``darrm solve --members NAME``).
        params_type: its parameters class (implements :class:`~darrm.member_params.MemberParams`).
        gamma_format: the ``format`` of its γ files (:mod:`darrm.gamma_file`).
        guarantee: how its per-query guarantee is written in messages.
        scope: what its certificate ranges over (``darrm solve``'s summary).
        certify: ``(γ, params, tol, progress, max_memory, executor) -> Certificate``, rigorous
            (``executor``: where its sweeps run, None: chosen by size; a model may run in-process).
        check: ``(params, family, options, executor, checkpoint) -> None``; raises ParameterError
            for what its solver would drop silently.
        solve: ``(params, prior, family, options, executor, checkpoint, progress, log) -> GammaTable``.
        expected_error: ``(γ, params, prior) -> float``, a table's expected error under a prior (the
            objective its solver minimises; :func:`darrm.gamma_file.check_objective` checks a
            file's recorded value against it); default: γ(0..K)'s.
    """

    name: str
    params_type: type[MemberParams]
    gamma_format: str
    guarantee: str
    scope: str
    certify: Callable[..., Certificate]
    check: Callable[..., None]
    solve: Callable[..., GammaTable]
    expected_error: Callable[[np.ndarray, Any, Prior], float] = _error_levels


#: every member model, by name
MEMBER_MODELS: dict[str, MemberModel] = {
    "shared": MemberModel("shared", PrivacyParams, "darrm-gamma/1", "(mε, δ)", "all corner multisets",
                          _certify_shared, _check_shared, _solve_shared),
    "disjoint": MemberModel("disjoint", DisjointParams, "darrm-gamma-disjoint/1", "(target_eps, target_delta)",
                            "every (changed-member vertex, number of high members)",
                            _certify_disjoint, _check_disjoint, _solve_disjoint),
    "groups": MemberModel("groups", GroupParams, "darrm-gamma-groups/1", "(target_eps, target_delta)",
                          "every configuration of one corner multiset per group",
                          _certify_groups, _check_groups, _solve_groups, _error_groups),
    "shard-groups": MemberModel("shard-groups", ShardGroupParams, "darrm-gamma-shard-groups/1",
                                "(eps_g, delta_g) per record group",
                                "every (record group, multiset of its copies' vertices, number of high members)",
                                _certify_shard_groups, _check_shard_groups, _solve_shard_groups),
    "weighted-shards": MemberModel("weighted-shards", WeightedShardParams, "darrm-gamma-weighted-shards/1",
                                   "(eps_g, delta_g) per budget group",
                                   "every (budget group, changed member's vertex, high members per group)",
                                   _certify_weighted_shards, _check_weighted_shards, _solve_weighted_shards,
                                   _error_groups),
}


def model_of(params: object) -> MemberModel:
    """The member model of ``params``.

    Raises:
        ParameterError: naming ``params``, when it is no registered model's parameters type.
    """
    for model in MEMBER_MODELS.values():
        if type(params) is model.params_type:
            return model
    kinds = " or ".join(m.params_type.__name__ for m in MEMBER_MODELS.values())
    raise ParameterError("params", f"must be {kinds}, got {type(params).__name__}")


def model_for_format(fmt: object) -> MemberModel | None:
    """The member model whose γ files have format ``fmt``, None if none."""
    return next((m for m in MEMBER_MODELS.values() if m.gamma_format == fmt), None)


# ----------------------------------------------------------------------------- families
def family_gamma(family: str, params: PrivacyParams, *, size: int | None = None,
                 tau: float | None = None, lam: float | None = None, scale: float | None = None) -> np.ndarray:
    """The closed-form γ of a family, uncertified.

    Args:
        family: a closed-form family of :mod:`darrm.families`: "sub" (Lemma 3.1), "dsub"
            (Theorem 4.1), "const" (randomised response, Lemma A.1) or "threshold" (the Gaussian
            threshold, binary GNMax).
        params: shared-data parameters.
        size: the subsample size of "sub"/"dsub" (default m, which must then be an integer).
        tau: τ of Lemma A.1 ("const"; default K).
        lam: λ of Lemma A.1 ("const"; default 1 − (1 − Δ)^K).
        scale: s of the Gaussian threshold ("threshold"; default: max γ = tanh(mε/2), private whatever the members do).

    Returns:
        γ(0..K), symmetric, in [0, 1]; :func:`solve` certifies it.

    Raises:
        ParameterError: an unknown family, γ_opt (no closed form), an option the family does not
            take, or a value out of its domain.
    """
    const_assumptions(params, tau, lam)  # τ, λ and params are checked whatever the family
    size = None if size is None else count("size", size, 1, params.K)
    fam = families.get(family)
    if fam.closed_form is None:
        closed = ", ".join(n for n, f in families.REGISTRY.items() if f.closed_form is not None)
        raise ParameterError("family", f"must be one of {closed} for a closed form; got {family!r}")
    scale = None if scale is None else positive("scale", scale)
    given = {k: v for k, v in (("size", size), ("tau", tau), ("lam", lam), ("scale", scale)) if v is not None}
    for name in given:
        if name not in fam.options:
            raise ParameterError(name, f"is no option of the {family} family (its options: "
                                       f"{', '.join(fam.options) or 'none'})")
    return fam.closed_form(params, **given)


# ----------------------------------------------------------------------------- requests
def check_request(
    params: PrivacyParams | DisjointParams | GroupParams | ShardGroupParams | WeightedShardParams,
    prior: Prior | None = None,
    *,
    family: str = "opt",
    options: SolveOptions | None = None,
    executor: Executor | TorchDevice | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    budget: TotalBudget | None = None,
) -> tuple[Prior, SolveOptions, Path | None]:
    """Check a [solve][darrm.solve] request before any work.

    ``darrm solve`` calls it before solving, ``solve`` again.  Besides each argument's own domain
    it refuses, naming the argument, what the solve would otherwise drop silently: a prior for
    another number of members (``means:`` with ≠ K means), a family the member model does not
    have, and what the model's own check refuses (shared members: ``darrm.solver.request``;
    disjoint members: ``darrm.disjoint.request``).

    Args:
        params: the member model's parameters.
        prior: the objective's prior (default: i.i.d., mean 0.75).
        family: a name of :mod:`darrm.families`.
        options: the solve options (default ``SolveOptions()``).
        executor: where the sweeps would run.
        checkpoint: the constraint-generation checkpoint file.
        budget: a total budget (:func:`darrm.budget.request.check_budget_request` refuses what
            the design does not use).

    Returns:
        (prior, options, checkpoint) with their defaults filled in.

    Raises:
        ParameterError: a bad or ignored argument.
    """
    fam = families.get(family)
    opts = options if options is not None else SolveOptions()
    if not isinstance(opts, SolveOptions):
        raise ParameterError("options", f"must be a SolveOptions, got {type(opts).__name__}")
    prior = IIDPrior() if prior is None else instance("prior", prior, Prior, "a darrm.Prior (IIDPrior, BetaPrior, …)")
    check_executor("executor", executor)
    checkpoint = None if checkpoint is None else path("checkpoint", checkpoint)
    model = model_of(params)
    prior.check_K(params.K)
    if budget is not None:
        from .budget.request import check_budget_request

        check_budget_request(params, budget, family, opts, executor, checkpoint)
        return prior, opts, checkpoint
    if model.name not in fam.members:
        have = [n for n, f in families.REGISTRY.items() if model.name in f.members]
        raise ParameterError("family", f"{model.name} members have only the families {', '.join(have)}; "
                                       f"got {family!r}")
    model.check(params, fam, opts, executor, checkpoint)
    return prior, opts, checkpoint


def solve(
    params: PrivacyParams | DisjointParams | GroupParams | ShardGroupParams | WeightedShardParams,
    prior: Prior | None = None,
    *,
    family: str = "opt",
    options: SolveOptions | None = None,
    executor: Executor | TorchDevice | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    progress: bool | None = None,
    log: Callable[[str], None] | None = None,
    budget: TotalBudget | None = None,
) -> GammaTable:
    """A certified γ table for ``params``.

    Every argument is checked before any work (`darrm.api.check_request`): an
    option the chosen method would ignore is refused, not dropped.

    Args:
        params: [PrivacyParams][darrm.PrivacyParams] (every member may see the changed record,
            the paper's setting) or [DisjointParams][darrm.DisjointParams] (members on disjoint
            shards).
        prior: the objective's prior over the members' vote probabilities (default i.i.d.
            mean 0.75); closed-form families record their expected error under it.
        family: "opt" (the LP optimum, Section 5) or a closed form "sub", "dsub", "const"
            (shared members only); :mod:`darrm.families` lists them.
        options: [SolveOptions][darrm.SolveOptions] (γ_opt only).
        executor: where the exhaustive sweeps run (``darrm solve --executor``: local processes,
            a Dask cluster or a GPU; shared members only: the disjoint LP has O(K) rows per round
            and runs in this process).
        checkpoint: a file that makes the constraint-generation working set resumable
            (shared-data γ_opt by constraint generation only).
        progress: show progress bars on the long sweeps (``None``: when stderr is a terminal).
        log: called with one line per constraint-generation round (per candidate with a budget).
        budget: a [TotalBudget][darrm.TotalBudget] (ε_total, δ_total, Q): design γ for Q queries
            instead of one (mε, δ) query ([design_for_budget][darrm.design_for_budget]); only K, ε
            and Δ of ``params`` are used, the table records its own per-query (m*ε, δ) and
            ``info["total_budget"]`` the budget and its composed ε.

    Returns:
        A [GammaTable][darrm.GammaTable] whose certificate passed (repaired by scaling if needed).

    Raises:
        ParameterError: bad arguments.
        SolveError: the LP failed or was not proven optimal (see ``options.accept_gap``).
        CertificationError: a closed form is not private for these parameters.
    """
    prior, opts, checkpoint = check_request(params, prior, family=family, options=options, executor=executor,
                                            checkpoint=checkpoint, budget=budget)
    progress = flag("progress", progress, allow_none=True)
    log = function("log", log, allow_none=True)
    if budget is not None and isinstance(params, PrivacyParams):
        from .budget.design import design_for_budget

        return design_for_budget(params.K, params.eps, params.member_delta, budget, prior, log=log).table
    if budget is not None:  # disjoint shards: the design is charged by the accountant, a layer above the core
        raise ParameterError("budget", "members on disjoint shards are designed for a total budget by "
                                       "darrm.design_for_budget(params, budget, prior)")
    model = model_of(params)
    try:
        return model.solve(params, prior, families.get(family), opts, executor, checkpoint, progress, log)
    except DarrmError:
        raise
    except (ValueError, ArithmeticError, RuntimeError, np.linalg.LinAlgError) as exc:
        # a numerical library's own failure (cvxpy, HiGHS, numpy) is a failed solve, never a crash
        raise SolveError(f"the {model.name}-members solver failed: {type(exc).__name__}: {exc}") from exc


# ----------------------------------------------------------------------------- certificates
#: verdicts remembered (a verdict is a pure function of the γ bytes, the parameters and tol)
CACHE_SIZE = 64
_cache: OrderedDict = OrderedDict()


def _key(gamma: np.ndarray, params: object, tol: float) -> tuple:
    return (hashlib.sha256(np.ascontiguousarray(gamma, dtype=np.float64).tobytes()).hexdigest(), repr(params), tol)


def certify(gamma: np.ndarray,
            params: PrivacyParams | DisjointParams | GroupParams | ShardGroupParams | WeightedShardParams, *,
            tol: float | None = None,
            progress: bool | None = None, max_memory: float | None = None,
            executor: Executor | TorchDevice | None = None) -> Certificate:
    """The rigorous certificate of the parameters' member model, memoised by content.

    Shared data: Lemma 3.4 over Lemma 5.1's corner multisets (`darrm.privacy.certify.certify`);
    disjoint shards: the O(K) reduction of :mod:`darrm.disjoint`.  Loading, saving and labelling
    with one table sweeps it once.

    Args:
        gamma: the full table γ(0..K).
        params: the member model's parameters.
        tol: a threshold ≤ 0 that may only make the verdict stricter (default 0).
        progress: show a progress bar on long sweeps (None: when stderr is a terminal).
        max_memory: refuse before any work when the estimated memory exceeds this many bytes
            (None: the memory available).
        executor: where the exhaustive sweep runs (shared members): an Executor
            (``darrm.backends``: serial, local processes, joblib's active backend, Dask), any
            ``concurrent.futures.Executor``, a TorchDevice, or None (local processes as fit).  The
            workers receive γ and the parameters and build the tables themselves; the verdict is
            the same on every executor.

    Returns:
        The [Certificate][darrm.Certificate]; ``certified`` is the verdict.

    Raises:
        ParameterError: bad arguments, or the certificate would not fit ``max_memory``.
    """
    t = validate_tol(tol)
    budget = validate_max_memory(max_memory)
    model = model_of(params)
    flag("progress", progress, allow_none=True)
    check_executor("executor", executor)
    g = validate_table_gamma(gamma, params)
    key = _key(g, params, t)
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    cert = model.certify(g, params, t, progress, budget, executor)
    _cache[key] = cert
    while len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return cert

