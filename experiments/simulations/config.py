"""Frozen descriptions of a simulation figure: panels, the γ curves in each, and the
"actual" distributions of p_i under which errors are reported.

Validated once here (``ParameterError`` names the bad field); :mod:`.compute` trusts them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from darrm import FAMILIES, ParameterError, PrivacyParams
from darrm.validation import choice, count

from .expected_error import _interval


@dataclass(frozen=True)
class Curve:
    """One γ in a panel.

    name: label in plots and files ("opt", "Sub", "opt-P", …).
    family: "opt" (LP, :func:`darrm.solve`), "sub" (γ_Sub with subsample
        size ``size``), "dsub" (Theorem 4.1 γ for allowance ``size``) or "const"
        (RR, Lemma A.1, majority assumed (τε, λ)-DP).
    prior_mean: μ of the i.i.d. prior of γ_opt (0.75 ≙ the paper's uniform prior).
    method: LP method for γ_opt ("auto", "full", "cutting-planes").
    """

    name: str
    family: str
    prior_mean: float | None = None
    size: int | None = None
    tau: float | None = None
    lam: float | None = None
    method: str = "auto"

    def __post_init__(self) -> None:
        choice("family", self.family, FAMILIES)
        if self.family == "opt" and self.prior_mean is None:
            raise ParameterError("prior_mean", "γ_opt needs the prior mean")
        if self.family in ("sub", "dsub") and self.size is None:
            raise ParameterError("size", f"γ_{self.family} needs an integer size")
        if self.family == "const" and (self.tau is None or self.lam is None):
            raise ParameterError("tau", "γ_const needs tau and lam (the majority is (tau*eps, lam)-DP)")


@dataclass(frozen=True)
class Panel:
    """One subplot: a privacy setting and the γ curves compared in it."""

    label: str
    params: PrivacyParams
    curves: tuple[Curve, ...]

    def __post_init__(self) -> None:
        if not self.curves:
            raise ParameterError("curves", "a panel needs at least one curve")
        names = [c.name for c in self.curves]
        if len(set(names)) != len(names):
            raise ParameterError("curves", f"curve names must be unique, got {names}")


@dataclass(frozen=True)
class Actual:
    """Distribution of the mechanisms' p_i for an error panel: p_i i.i.d. U[low, high]
    (a point mass when low == high)."""

    name: str
    low: float
    high: float

    def __post_init__(self) -> None:
        _interval(self.low, self.high)

    @property
    def is_point(self) -> bool:
        return self.low == self.high


UNIFORM_01 = Actual("U[0,1]", 0.0, 1.0)


@dataclass(frozen=True)
class FigureConfig:
    """Everything needed to regenerate one figure.

    objective_means: priors μ under which the LP objective (expected signed error,
        Eq. 196–201) of every curve is reported, to show the ordering γ_opt ≤ baselines.
    mc_samples / seed: Monte Carlo for actual distributions that straddle ½.
    p_points: grid of the exact error curves E(p), p ∈ [0, 1].
    """

    key: str
    title: str
    panels: tuple[Panel, ...]
    actuals: tuple[Actual, ...] = (UNIFORM_01,)
    objective_means: tuple[float, ...] = (0.75,)
    mc_samples: int = 100_000
    seed: int = 0
    p_points: int = 401
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not self.panels:
            raise ParameterError("panels", "a figure needs at least one panel")
        count("mc_samples", self.mc_samples, minimum=2)
        count("p_points", self.p_points, minimum=3)
        if not self.actuals:
            raise ParameterError("actuals", "need at least one actual distribution")
