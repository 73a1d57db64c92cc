"""DP-SGD accounting for the teachers (Abadi et al. 2016; DaRRM paper Section 6.2, which does not say how it accounted).

A DP-SGD run with Poisson sampling at rate q, noise multiplier σ (noise std / clip
norm) and T steps is the T-fold composition of the Poisson-subsampled Gaussian
mechanism, under add/remove-one adjacency.  ε for a target δ comes from

* ``"prv"`` — Opacus's PRV accountant (Gopi et al. 2021; Opacus's default).  It
  returns an *upper bound* estimate + ``eps_error``; with Opacus's default
  ``eps_error=0.01`` this is what the paper reports (0.0892 / 0.0852), about
  0.01 above the tight value.
* ``"rdp"`` — Opacus's RDP analysis (Mironov et al. 2019) with the improved
  RDP→DP conversion (Balle et al. 2020, Thm 21) over :data:`DEFAULT_RDP_ORDERS`,
  which extends Opacus's default order grid (2..63) to 1024 because at ε≈0.09
  the optimum order lies above 63.
* ``"pld"`` — Google ``dp_accounting``'s PLD accountant (pessimistic
  discretisation ``value_discretization_interval``): an independent, tight check.

σ for a target ε (:func:`noise_multiplier_for`) comes from the same libraries: Opacus's
``get_noise_multiplier`` (``"prv"``, ``"rdp"``) and ``dp_accounting.mechanism_calibration``
(``"pld"``).

The paper's loader convention: ``len(loader) = ceil(n / batch_size)``,
q = 1/len(loader), T = epochs·len(loader) (Opacus ``make_private`` with Poisson
sampling); see :meth:`DPSGDRun.from_loader`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal, TypedDict, Unpack

from darrm import validation as v
from darrm.errors import ParameterError, require
from darrm.neighboring import NeighboringRelation

#: DP-SGD's neighbouring data sets differ by adding or removing one example (Opacus, dp_accounting)
NEIGHBORING_RELATION = NeighboringRelation.ADD_OR_REMOVE_ONE

Accountant = Literal["prv", "rdp", "pld"]
ACCOUNTANTS: tuple[Accountant, ...] = ("prv", "rdp", "pld")


class AccountantOptions(TypedDict, total=False):
    """The keyword options of :func:`epsilon`, forwarded by :meth:`DPSGDRun.epsilon` and
    :func:`noise_multiplier_for`: ``eps_error`` (PRV), ``orders`` (RDP), ``discretization`` (PLD)."""

    eps_error: float
    orders: tuple[float, ...] | None
    discretization: float

#: Opacus's default orders (1.1..10.9, 12..63) extended with integer orders to 1024.
#: Integer orders only above 11: Opacus's fractional-order series is unstable there.
DEFAULT_RDP_ORDERS: tuple[float, ...] = (
    tuple(1 + x / 10.0 for x in range(1, 100))
    + tuple(float(a) for a in range(12, 257))
    + tuple(float(a) for a in range(272, 1025, 16))
)


@dataclass(frozen=True)
class DPSGDRun:
    """Parameters of one DP-SGD training run (validated at construction).

    Attributes:
        noise_multiplier: σ, the noise std over the clipping norm (> 0).
        sample_rate: q, the Poisson sampling rate, in (0, 1].
        steps: T, the number of steps.
        delta: the δ of the guarantee, in (0, 1).
    """

    noise_multiplier: float
    sample_rate: float
    steps: int
    delta: float
    neighboring_relation = NEIGHBORING_RELATION

    def __post_init__(self) -> None:
        v.positive("noise_multiplier", self.noise_multiplier)
        v.sample_rate("sample_rate", self.sample_rate)
        v.count("steps", self.steps)
        v.open_unit("delta", self.delta)

    @classmethod
    def from_loader(
        cls, noise_multiplier: float, n_samples: int, batch_size: int, epochs: int, delta: float
    ) -> DPSGDRun:
        """A run of Opacus's Poisson-sampling loader: q = 1/ceil(n/batch), T = epochs·ceil(n/batch).

        Args:
            noise_multiplier: σ, the noise multiplier.
            n_samples: the size of the training set.
            batch_size: the expected batch size.
            epochs: the number of epochs.
            delta: the δ at which ε is reported.

        Returns:
            The run.

        Raises:
            ParameterError: a parameter is out of range.
        """
        n = v.count("n_samples", n_samples)
        b = v.count("batch_size", batch_size)
        if b > n:  # ceil(n/b) = 1 would silently be a full-batch run: almost surely a mistake
            raise ParameterError("batch_size", f"must be <= n_samples ({n}), got {b}")
        e = v.count("epochs", epochs)
        batches = -(-n // b)
        return cls(float(noise_multiplier), 1.0 / batches, e * batches, delta)

    def epsilon(self, accountant: Accountant = "prv", **options: Unpack[AccountantOptions]) -> float:
        """ε of this run at its δ under ``accountant`` (see :func:`epsilon` for the options).

        Args:
            accountant: ``"prv"``, ``"rdp"`` or ``"pld"``.
            **options: the accountant's options.

        Returns:
            ε.
        """
        return epsilon(self.noise_multiplier, self.sample_rate, self.steps, self.delta, accountant, **options)


def _eps_prv(sigma: float, q: float, steps: int, delta: float, eps_error: float) -> float:
    PRVAccountant = require("opacus.accountants", "experiments", "the DP-SGD accountant").PRVAccountant

    acc = PRVAccountant()
    acc.history = [(sigma, q, steps)]
    with warnings.catch_warnings():
        # the PRV domain size is bounded through RDP; its edge-order warning is irrelevant here
        warnings.simplefilter("ignore", UserWarning)
        return float(acc.get_epsilon(delta=delta, eps_error=eps_error))


def _eps_rdp(sigma: float, q: float, steps: int, delta: float, orders: tuple[float, ...]) -> float:
    rdp_mod = require("opacus.accountants.analysis.rdp", "experiments", "the DP-SGD accountant")
    compute_rdp, get_privacy_spent = rdp_mod.compute_rdp, rdp_mod.get_privacy_spent

    rdp = compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=list(orders))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # edge-order warning; checked below
        eps, best = get_privacy_spent(orders=list(orders), rdp=rdp, delta=delta)
    if best == max(orders):
        warnings.warn(f"RDP optimum at the largest order {best}; pass a wider `orders` grid", stacklevel=3)
    return float(max(eps, 0.0))


def _eps_pld(sigma: float, q: float, steps: int, delta: float, discretization: float) -> float:
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=discretization)
    event = dp_accounting.GaussianDpEvent(sigma)
    if q < 1.0:
        event = dp_accounting.PoissonSampledDpEvent(q, event)
    acc.compose(event, steps)
    return float(acc.get_epsilon(delta))


def epsilon(
    noise_multiplier: float,
    sample_rate: float,
    steps: int,
    delta: float,
    accountant: Accountant = "prv",
    *,
    eps_error: float = 0.01,
    orders: tuple[float, ...] | None = None,
    discretization: float = 1e-4,
) -> float:
    """ε such that T steps of DP-SGD (σ, q) are (ε, δ)-DP (add/remove adjacency).

    ``eps_error`` applies to ``"prv"`` (Opacus default 0.01, which the paper used),
    ``orders`` to ``"rdp"`` (default :data:`DEFAULT_RDP_ORDERS`), ``discretization``
    to ``"pld"``.  Raises ``ParameterError`` naming any invalid argument.

    Args:
        noise_multiplier: σ, the noise std over the clipping norm (> 0).
        sample_rate: q, the Poisson sampling rate, in (0, 1].
        steps: T, the number of steps.
        delta: the target δ, in (0, 1).
        accountant: "prv", "rdp" or "pld".
        eps_error: the PRV accountant's ε error.
        orders: the RDP orders.
        discretization: the PLD's loss grid.

    Returns:
        ε, an upper bound for the chosen accountant.

    Raises:
        ParameterError: an argument is invalid (named).
    """
    run = DPSGDRun(noise_multiplier, sample_rate, steps, delta)
    acc = v.choice("accountant", accountant, ACCOUNTANTS)
    # every option is checked, also those another accountant uses
    eps_error = v.positive("eps_error", eps_error)
    discretization = v.positive("discretization", discretization)
    if orders is None:
        grid = DEFAULT_RDP_ORDERS
    else:
        if isinstance(orders, (str, bytes)) or not hasattr(orders, "__iter__"):
            raise ParameterError("orders", f"must be a non-empty sequence of orders > 1, got {orders!r}")
        grid = tuple(v.real("orders", a, 1.0, None, closed="neither") for a in orders)
        if len(grid) == 0:
            raise ParameterError("orders", "must be a non-empty sequence of orders > 1")
    if acc == "prv":
        return _eps_prv(float(run.noise_multiplier), float(run.sample_rate), int(run.steps),
                        float(run.delta), eps_error)
    if acc == "rdp":
        return _eps_rdp(float(run.noise_multiplier), float(run.sample_rate), int(run.steps), float(run.delta), grid)
    return _eps_pld(float(run.noise_multiplier), float(run.sample_rate), int(run.steps),
                    float(run.delta), discretization)


def _event(sigma: float, q: float, steps: int):
    """T steps of the Poisson-subsampled Gaussian mechanism as a ``dp_accounting`` event."""
    import dp_accounting

    event = dp_accounting.GaussianDpEvent(sigma)
    if q < 1.0:
        event = dp_accounting.PoissonSampledDpEvent(q, event)
    return dp_accounting.SelfComposedDpEvent(event, steps)


def _sigma_pld(target: float, q: float, steps: int, delta: float, tol: float, discretization: float) -> float:
    """``dp_accounting.mechanism_calibration`` with the PLD accountant, bracketed by doubling from
    [1, 2]; its σ tolerance is narrowed until ε is within ``tol`` of the target."""
    from dp_accounting import mechanism_calibration as mc
    from dp_accounting.pld import pld_privacy_accountant

    def eps_of(sigma: float) -> float:
        return _eps_pld(sigma, q, steps, delta, discretization)

    lo, hi = 1.0, 2.0
    while eps_of(hi) > target:
        lo, hi = hi, 2.0 * hi
        if hi > 1e7:
            raise ParameterError("target_eps", f"no noise multiplier up to 1e7 reaches eps={target} at delta={delta}")
    while lo > 1e-3 and eps_of(lo) <= target:
        lo, hi = lo / 2.0, lo
    if eps_of(lo) <= target:
        return lo
    rel = 1e-6
    while True:
        sigma = float(mc.calibrate_dp_mechanism(
            lambda: pld_privacy_accountant.PLDAccountant(value_discretization_interval=discretization),
            lambda s: _event(s, q, steps), target, delta, mc.ExplicitBracketInterval(lo, hi), tol=rel * hi))
        if eps_of(sigma) >= target - tol or rel < 1e-14:
            return sigma
        rel /= 100.0


def noise_multiplier_for(
    target_eps: float,
    sample_rate: float,
    steps: int,
    delta: float,
    accountant: Accountant = "prv",
    tol: float = 1e-4,
    **options: Unpack[AccountantOptions],
) -> float:
    """Smallest σ (to within ``tol`` in ε) whose DP-SGD run is (target_eps, δ)-DP.

    Returns σ with ``target_eps - tol <= epsilon(σ, ...) <= target_eps`` for the chosen
    accountant: ``"prv"``/``"rdp"`` by Opacus's ``get_noise_multiplier`` with
    ``epsilon_tolerance=tol`` (its default 0.01 is far too coarse at ε ≈ 0.09; ``eps_error`` and
    ``orders`` are passed to the accountant as for :func:`epsilon`), ``"pld"`` by
    ``dp_accounting.mechanism_calibration`` (Brent's method; the returned σ is checked to satisfy
    the target).  Both return the certified side: ε(σ) ≤ target_eps.

    Args:
        target_eps: the target ε (> 0).
        sample_rate: q, the Poisson sampling rate, in (0, 1].
        steps: T, the number of steps.
        delta: the target δ, in (0, 1).
        accountant: "prv", "rdp" or "pld".
        tol: the tolerance in ε (> 0).
        **options: ``eps_error`` (PRV), ``orders`` (RDP) or ``discretization`` (PLD).

    Returns:
        σ with ε(σ) ≤ target_eps.

    Raises:
        ParameterError: an argument is invalid (named), or no σ meets the target.
    """
    target = v.epsilon("target_eps", target_eps)
    tol = v.positive("tol", tol)
    if tol >= target:
        raise ParameterError("tol", f"must be smaller than target_eps={target}")
    run = DPSGDRun(1.0, sample_rate, steps, delta)  # validate the rest once
    acc = v.choice("accountant", accountant, ACCOUNTANTS)
    q, t, d = float(run.sample_rate), int(run.steps), float(run.delta)
    if acc == "pld":
        return _sigma_pld(target, q, t, d, tol, v.positive("discretization", options.get("discretization", 1e-4)))
    opacus_utils = require("opacus.accountants.utils", "experiments", "the DP-SGD accountant")
    kwargs: dict[str, float | list[float]]
    if acc == "prv":
        kwargs = {"eps_error": v.positive("eps_error", options.get("eps_error", 0.01))}
    else:
        orders = options.get("orders")  # None: the default orders, as in epsilon()
        grid = tuple(float(a) for a in (DEFAULT_RDP_ORDERS if orders is None else orders))
        if len(grid) == 0 or min(grid) <= 1.0:
            raise ParameterError("orders", "must be a non-empty sequence of orders > 1")
        kwargs = {"alphas": list(grid)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # PRV domain / RDP edge-order warnings, as in epsilon()
        try:
            sigma = opacus_utils.get_noise_multiplier(target_epsilon=target, target_delta=d, sample_rate=q, steps=t,
                                                      accountant=acc, epsilon_tolerance=tol, **kwargs)
        except ValueError as exc:  # "The privacy budget is too low." (σ above Opacus's 1e6)
            raise ParameterError("target_eps", f"no noise multiplier reaches eps={target}: {exc}") from None
    return float(sigma)


@dataclass(frozen=True)
class TeacherTraining:
    """DP-SGD settings of a private teacher (Opacus names).

    Attributes:
        noise_multiplier: σ, the noise standard deviation over the clipping norm.
        max_grad_norm: C, the per-sample gradient clipping norm.
        epochs: passes over the teacher's shard.
        batch_size: the expected batch size (Poisson sampling at rate 1/⌈n/batch⌉).
        delta: Δ, the δ at which a teacher's ε is reported.
    """

    noise_multiplier: float = 12.0
    max_grad_norm: float = 1.0
    epochs: int = 5
    batch_size: int = 32
    delta: float = 1e-4


#: The paper's private teachers (Section 6.2, Appendix D.2): σ = 12, C = 1, 5 epochs, batch 32,
#: δ = 1e-4.  The one place these constants are written: the accounting (:func:`teacher_runs`,
#: :mod:`darrm.accounting.paper`) and the PATE experiments' defaults read them from here.
PAPER_TEACHERS = TeacherTraining()


def teacher_runs() -> dict[str, DPSGDRun]:
    """The paper's private teachers (:data:`PAPER_TEACHERS`): σ=12, C=1, 5 epochs, batch 32, δ=1e-4.

    MNIST: 11,272/11 → 1,024 samples per teacher (32 batches);
    Fashion-MNIST: 1,090 samples per teacher (35 batches).  The paper says its
    Fashion-MNIST training set has 10,000 samples (909 per teacher, giving
    ε=0.0938); 1,090 = ⌊12,000/11⌋ — all Sandal+Bag training images — is the
    count that reproduces the paper's 0.0852 (see docs/accounting.md).
    """
    return {
        name: DPSGDRun.from_loader(t.noise_multiplier, n, t.batch_size, t.epochs, t.delta)
        for t in (PAPER_TEACHERS,) for name, n in (("mnist", 1024), ("fashion-mnist", 1090))
    }


def compare_accountants(
    sample_rate: float,
    steps: int,
    delta: float,
    *,
    noise_multiplier: float | None = None,
    target_eps: float | None = None,
    accountants: tuple[Accountant, ...] = ACCOUNTANTS,
    tol: float = 1e-4,
) -> list[dict[str, float | str]]:
    """One record per accountant (``darrm account dpsgd``): ``{"accountant", "epsilon"}`` for a
    given ``noise_multiplier``, or ``{"accountant", "noise_multiplier"}`` for a ``target_eps``."""
    tol = v.positive("tol", tol)  # checked even when no target is solved for
    if isinstance(accountants, (str, bytes)) or not isinstance(accountants, (tuple, list)) or not accountants:
        raise ParameterError("accountants",
                             f"must be a non-empty tuple of {', '.join(ACCOUNTANTS)}, got {accountants!r}")
    accountants = tuple(v.choice("accountants", a, ACCOUNTANTS) for a in accountants)
    if target_eps is not None:
        return [
            {"accountant": a,
             "noise_multiplier": noise_multiplier_for(target_eps, sample_rate, steps, delta, a, tol=tol)}
            for a in accountants
        ]
    if noise_multiplier is None:
        raise ParameterError("noise_multiplier", "give a noise multiplier, or a target epsilon to solve for it")
    return [{"accountant": a, "epsilon": epsilon(noise_multiplier, sample_rate, steps, delta, a)} for a in accountants]


__all__ = [
    "ACCOUNTANTS",
    "Accountant",
    "AccountantOptions",
    "DEFAULT_RDP_ORDERS",
    "NEIGHBORING_RELATION",
    "DPSGDRun",
    "compare_accountants",
    "epsilon",
    "noise_multiplier_for",
    "teacher_runs",
    "PAPER_TEACHERS",
    "TeacherTraining",
]
