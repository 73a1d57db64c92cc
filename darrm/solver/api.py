"""``darrm.solve``: one call for every γ family, shared or disjoint members, certified."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..backends.executors import SerialExecutor, check_executor
from ..budget.spec import TotalBudget
from ..disjoint.params import DisjointParams
from ..disjoint.solver import solve_gamma_opt_disjoint
from ..errors import CertificationError, ParameterError
from ..gamma import const_assumptions, gamma_const, gamma_dsub, gamma_sub
from ..locking import claim
from ..params import PrivacyParams
from ..prior import IIDPrior, Prior
from ..privacy.certify import certify_tight
from ..table import GammaTable
from ..validation import count, flag, function, instance, path
from .full_lp import choose_method
from .gamma_opt import solve_gamma_opt
from .objective import expected_signed_error
from .options import SolveOptions

if TYPE_CHECKING:
    from ..backends import Executor, TorchDevice

#: the γ families by name (Algorithm 1's γ): the LP optimum and the closed forms
FAMILIES = ("opt", "sub", "dsub", "const")
"""The γ families :func:`solve` knows: "opt" (γ_opt, the LP of Section 5) and the closed forms
"sub" (γ_Sub, Lemma 3.1), "dsub" (the 2m−1 subsampling γ of Theorem 4.1) and "const" (randomised
response, Lemma A.1)."""


def family_gamma(family: str, params: PrivacyParams, *, size: int | None = None,
                 tau: float | None = None, lam: float | None = None) -> np.ndarray:
    """The closed-form γ of a family, uncertified: "sub" (Lemma 3.1, subsample ``size`` = m),
    "dsub" (Theorem 4.1), "const" (RR, Lemma A.1, optional τ, λ)."""
    const_assumptions(params, tau, lam)  # checked whatever the family
    size = None if size is None else count("size", size, 1, params.K)
    if family == "const":
        return gamma_const(params, tau=tau, lam=lam)
    if family in ("sub", "dsub"):
        m = size if size is not None else params.m
        if float(m) != int(m):
            raise ParameterError("m", f"must be an integer for the {family} family, got {m}")
        return (gamma_sub if family == "sub" else gamma_dsub)(params.K, int(m))
    raise ParameterError("family", f"must be one of sub, dsub, const for a closed form; got {family!r}")


#: :class:`SolveOptions` fields read only by constraint generation over corner multisets (shared
#: members): the full LP and the closed forms have no rounds, cuts, stabilisation or screening
CUTTING_PLANES_FIELDS = ("max_rounds", "cuts_per_round", "stabilize", "screen")

#: :class:`SolveOptions` fields a closed-form family uses (its certificate's memory budget)
CLOSED_FORM_FIELDS = ("max_memory",)

#: :class:`SolveOptions` fields the disjoint-members solver ignores (it is always constraint
#: generation over its O(K) rows, with plain Kelley cuts and no screening)
DISJOINT_IGNORED = ("stabilize", "screen")


def _changed(opts: SolveOptions, names: tuple[str, ...]) -> str | None:
    """The first of ``names`` whose value in ``opts`` is not the default, else None."""
    default = SolveOptions()
    return next((n for n in names if getattr(opts, n) != getattr(default, n)), None)


def check_request(
    params: PrivacyParams | DisjointParams,
    prior: Prior | None = None,
    *,
    family: str = "opt",
    options: SolveOptions | None = None,
    executor: Executor | TorchDevice | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    budget: TotalBudget | None = None,
) -> tuple[Prior, SolveOptions, Path | None]:
    """Check a :func:`solve` request before any work; returns (prior, options, checkpoint) with
    their defaults filled in.  ``darrm solve`` calls it before solving, :func:`solve` again.

    Besides each argument's own domain it refuses, naming the argument, what the solve would
    otherwise drop silently: a prior for another number of members (``means:`` with ≠ K means);
    for disjoint members a ``checkpoint`` or an ``executor`` (the disjoint LP has O(K) rows per
    round and is solved in this process: no sweep to distribute, nothing to checkpoint), the full
    LP ``method`` or the options of :data:`DISJOINT_IGNORED`; for a closed-form family a
    ``checkpoint`` or any option but :data:`CLOSED_FORM_FIELDS`; for the full LP (asked for, or
    picked by "auto" at this size) a ``checkpoint`` or the options of :data:`CUTTING_PLANES_FIELDS`;
    with a total ``budget`` (:func:`darrm.budget.design.design_for_budget`) disjoint members, a
    family other than "opt", a ``checkpoint``, an ``executor`` or any option.

    Raises:
        ParameterError: a bad or ignored argument.
    """
    if family not in FAMILIES:
        raise ParameterError("family", f"must be one of {', '.join(FAMILIES)}; got {family!r}")
    opts = options if options is not None else SolveOptions()
    if not isinstance(opts, SolveOptions):
        raise ParameterError("options", f"must be a SolveOptions, got {type(opts).__name__}")
    prior = IIDPrior() if prior is None else instance("prior", prior, Prior, "a darrm.Prior (IIDPrior, BetaPrior, …)")
    check_executor("executor", executor)
    checkpoint = None if checkpoint is None else path("checkpoint", checkpoint)
    if not isinstance(params, (PrivacyParams, DisjointParams)):
        raise ParameterError("params", f"must be PrivacyParams or DisjointParams, got {type(params).__name__}")
    prior.check_K(params.K)
    if budget is not None:
        _check_budget_request(params, budget, family, opts, executor, checkpoint)
        return prior, opts, checkpoint
    if isinstance(params, DisjointParams):
        if family != "opt":
            raise ParameterError("family", "disjoint members have only the optimal family ('opt')")
        why = ("the disjoint LP has O(K) rows per round and is solved in this process: "
               "no sweep to distribute and nothing to checkpoint")
        if checkpoint is not None:
            raise ParameterError("checkpoint", f"applies to shared members only; {why}")
        if executor is not None and not isinstance(executor, SerialExecutor):
            raise ParameterError("executor", f"applies to shared members only; {why}")
        if opts.method == "full":
            raise ParameterError("method", "disjoint members are always solved by constraint generation over "
                                           "their O(K) rows; 'full' applies to shared members only")
        ignored = _changed(opts, DISJOINT_IGNORED)
        if ignored is not None:
            raise ParameterError(ignored, "applies to shared members only (constraint generation over corner "
                                          "multisets); the disjoint solver does not use it")
        return prior, opts, checkpoint
    if family != "opt":
        if checkpoint is not None:
            raise ParameterError("checkpoint", f"applies to γ_opt (family 'opt') only; the {family} family is a "
                                               "closed form, computed without rounds")
        ignored = _changed(opts, tuple(n for n in SolveOptions.field_names() if n not in CLOSED_FORM_FIELDS))
        if ignored is not None:
            raise ParameterError(ignored, f"applies to γ_opt (family 'opt') only; the {family} family is a "
                                          "closed form (only max_memory applies, to its certificate)")
        return prior, opts, checkpoint
    method = choose_method(params) if opts.method == "auto" else opts.method
    if method == "full":
        hint = (f"; at K={params.K} method 'auto' picks the full LP: pass method 'cutting-planes' "
                "(--method cutting-planes) to use it" if opts.method == "auto" else "")
        if checkpoint is not None:
            raise ParameterError("checkpoint", "applies to constraint generation only; the full LP is solved "
                                               f"in one step, with nothing to resume{hint}")
        ignored = _changed(opts, CUTTING_PLANES_FIELDS)
        if ignored is not None:
            raise ParameterError(ignored, f"applies to constraint generation only, not to the full LP{hint}")
    return prior, opts, checkpoint


def _check_budget_request(params: PrivacyParams | DisjointParams, budget: object, family: str,
                          opts: SolveOptions, executor: object, checkpoint: Path | None) -> None:
    """What a total-budget design (:mod:`darrm.budget.design`) cannot use is refused, named."""
    instance("budget", budget, TotalBudget, "a darrm.TotalBudget")
    why = "a total-budget design searches its own families and certifies by composition"
    if isinstance(params, DisjointParams):
        raise ParameterError("budget", "applies to shared members (PrivacyParams) only")
    if family != "opt":
        raise ParameterError("family", f"must be 'opt' with a budget ({why}); got {family!r}")
    if checkpoint is not None:
        raise ParameterError("checkpoint", f"does not apply with a budget ({why})")
    if executor is not None and not isinstance(executor, SerialExecutor):
        raise ParameterError("executor", f"does not apply with a budget ({why}, in this process)")
    ignored = _changed(opts, SolveOptions.field_names())
    if ignored is not None:
        raise ParameterError(ignored, f"does not apply with a budget ({why})")


def solve(
    params: PrivacyParams | DisjointParams,
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

    Every argument is checked before any work (:func:`check_request`): an option the chosen
    method would ignore is refused, not dropped.

    Args:
        params: :class:`~darrm.PrivacyParams` (every member may see the changed record, the
            paper's setting) or :class:`~darrm.DisjointParams` (members on disjoint shards).
        prior: the objective's prior over the members' vote probabilities (default i.i.d.
            mean 0.75); closed-form families record their expected error under it.
        family: "opt" (the LP optimum, Section 5) or a closed form "sub", "dsub", "const"
            (shared members only).
        options: :class:`~darrm.SolveOptions` (γ_opt only).
        executor: where the exhaustive sweeps run (``darrm solve --executor``: local processes,
            a Dask cluster or a GPU; shared members only: the disjoint LP has O(K) rows per round
            and runs in this process).
        checkpoint: a file that makes the constraint-generation working set resumable
            (shared-data γ_opt by constraint generation only).
        progress: show progress bars on the long sweeps (``None``: when stderr is a terminal).
        log: called with one line per constraint-generation round (per candidate with a budget).
        budget: a :class:`~darrm.TotalBudget` (ε_total, δ_total, Q): design γ for Q queries
            instead of one (mε, δ) query (:func:`darrm.budget.design.design_for_budget`); only K,
            ε and Δ of ``params`` are used, the table records its own per-query (m*ε, δ) and
            ``info["total_budget"]`` the budget and its composed ε.

    Returns:
        A :class:`~darrm.GammaTable` whose certificate passed (repaired by scaling if needed).

    Raises:
        ParameterError: bad arguments.
        SolveError: the LP failed or was not proven optimal (see ``options.accept_gap``).
        CertificationError: a closed form is not private for these parameters.
    """
    prior, opts, checkpoint = check_request(params, prior, family=family, options=options, executor=executor,
                                            checkpoint=checkpoint, budget=budget)
    progress = flag("progress", progress, allow_none=True)
    log = function("log", log, allow_none=True)
    if budget is not None and isinstance(params, PrivacyParams):  # disjoint members refused by check_request
        from ..budget.design import design_for_budget

        return design_for_budget(params.K, params.eps, params.member_delta, budget, prior, log=log).table
    if isinstance(params, DisjointParams):
        return solve_gamma_opt_disjoint(params, prior, options=opts, log=log)
    if family == "opt":
        with claim("checkpoint", checkpoint) if checkpoint is not None else nullcontext():
            return solve_gamma_opt(params, prior, options=opts, progress=progress, executor=executor,
                                   checkpoint=checkpoint, log=log)
    g = family_gamma(family, params)
    # exactly tight families (γ_Sub at m = 1, …) need a 1 − O(ρ) scale before float64 can prove them
    g, cert, scale = certify_tight(g, params, progress=progress, executor=executor, max_memory=opts.max_memory)
    if not cert.certified:
        raise CertificationError(
            f"γ_{family} is not (mε, δ)-DP for these parameters (certificate bound {cert.violation:.3e})"
        )
    return GammaTable(params, g, family, cert.violation, prior.to_dict(), expected_signed_error(g, prior),
                      info={"repair_scale": scale} if scale != 1.0 else {})
