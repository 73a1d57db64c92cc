"""The facade's requests: solve, certify and the closed-form families.

``solve``, ``certify`` and ``check_request`` ask the parameters' member model
(:func:`darrm.models.model_of`: one class per model, one registry) and the family
(:mod:`darrm.families`); nothing here names a model.  The solvers are imported when a solve runs,
so that loading or verifying a table imports no LP library.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import families
from .backends.executors import check_executor
from .errors import DarrmError, ParameterError, SolveError
from .gamma import const_assumptions
from .models import model_of
from .models.disjoint.params import DisjointParams
from .models.groups.params import GroupParams
from .models.shard_groups.params import ShardGroupParams
from .models.weighted_shards.params import WeightedShardParams
from .params import PrivacyParams
from .prior import IIDPrior, Prior
from .privacy.certify import Certificate, validate_max_memory, validate_tol
from .solver.options import SolveOptions
from .table import GammaTable, validate_table_gamma
from .validation import count, flag, function, instance, path, positive

if TYPE_CHECKING:
    from .backends import Executor, TorchDevice
    from .budget.spec import TotalBudget

FAMILIES: tuple[str, ...] = families.names()
"""The γ families [solve][darrm.solve] knows, as registered when darrm was imported: "opt" (γ_opt,
the LP of Section 5) and the closed forms "sub" (γ_Sub, Lemma 3.1), "dsub" (the 2m−1 subsampling γ
of Theorem 4.1) and "const" (randomised response, Lemma A.1).  ``darrm.families`` is the registry."""


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
    have, and what the model's own check refuses (:meth:`darrm.models.base.MemberModel.check`).

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
    if not fam.defined_for(model.name):
        have = [n for n, f in families.REGISTRY.items() if f.defined_for(model.name)]
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
) -> GammaTable:
    """A certified γ table for ``params`` (for a total budget over Q queries instead of one query:
    [design_for_budget][darrm.design_for_budget]).

    Every argument is checked before any work (`darrm.api.check_request`): an
    option the chosen method would ignore is refused, not dropped.

    Args:
        params: any registered member model's parameters (:mod:`darrm.models`):
            [PrivacyParams][darrm.PrivacyParams] (every member may see the changed record, the
            paper's setting), [DisjointParams][darrm.DisjointParams] (members on disjoint shards),
            [GroupParams][darrm.GroupParams], [ShardGroupParams][darrm.ShardGroupParams] or
            [WeightedShardParams][darrm.WeightedShardParams].
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
        log: called with one line per constraint-generation round.

    Returns:
        A [GammaTable][darrm.GammaTable] whose certificate passed (repaired by scaling if needed).

    Raises:
        ParameterError: bad arguments.
        SolveError: the LP failed or was not proven optimal (see ``options.accept_gap``).
        CertificationError: a closed form is not private for these parameters.

    Examples:
        γ_opt for five members, each (0.5, 10⁻⁵)-DP, spending one member's worth of privacy
        per label (m = 1), for members right with probability 0.75 on average:

        >>> import darrm
        >>> params = darrm.PrivacyParams(K=5, m=1, eps=0.5, member_delta=1e-5)
        >>> table = darrm.solve(params, darrm.IIDPrior(0.75))
        >>> table.status, [round(float(g), 3) for g in table.gamma]
        ('optimal', [1.0, 0.6, 0.2, 0.2, 0.6, 1.0])
        >>> darrm.solve(params, family="const").family
        'const'
    """
    prior, opts, checkpoint = check_request(params, prior, family=family, options=options, executor=executor,
                                            checkpoint=checkpoint)
    progress = flag("progress", progress, allow_none=True)
    log = function("log", log, allow_none=True)
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

    Each model's own (:meth:`darrm.models.base.MemberModel.certify`): shared data, Lemma 3.4 over
    Lemma 5.1's corner multisets (`darrm.privacy.certify.certify`); disjoint shards, the O(K)
    reduction of :mod:`darrm.models.disjoint`; the others their reductions.  Loading, saving and
    labelling with one table sweeps it once.

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

    Examples:
        The table :func:`solve` returns passes; the plain majority (γ ≡ 1) is not private:

        >>> import numpy as np
        >>> import darrm
        >>> params = darrm.PrivacyParams(K=5, m=1, eps=0.5, member_delta=1e-5)
        >>> darrm.certify(darrm.solve(params).gamma, params).certified
        True
        >>> cert = darrm.certify(np.ones(6), params)
        >>> cert.certified, round(cert.violation, 3)
        (False, 0.26)
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

