"""Pure computation of a simulation figure: γ tables, their privacy certificates, LP
objectives, exact error curves and expected errors.  No I/O, no plotting.

Every γ — baselines included — is passed through the independent certificate
:func:`darrm.certify_tight` for the panel's (mε, δ), so a figure never compares
against a baseline that is not actually (mε, δ)-DP without saying so (``certified``).

Certificate: every γ must pass the rigorous rule of :mod:`darrm.privacy.condition` (bound ≤ 0, never
widened).  The closed-form baselines are exactly private in exact arithmetic and several are
*tight* (γ_Sub, γ_DSub and RR with τ = m meet some constraint with equality), so float64
rounding can leave them ~1e-17 on either side of the boundary; they go through
:func:`darrm.certify_tight`, which scales such a table by 1 − O(ρ) (≥ 1 − 1e-10,
recorded as ``repair_scale``) until it is certified, and leaves a table that really violates
uncertified.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

import darrm
from darrm import IIDPrior, PrivacyParams, certify_tight, error_curve, expected_signed_error

from .config import Actual, Curve, FigureConfig, Panel
from .expected_error import iid_uniform_error, is_one_sided, product_uniform_error, product_uniform_error_mc


@dataclass(frozen=True)
class ExpectedError:
    """Expected error of one curve under one actual distribution.

    method: "exact" (point mass, or product law on one side of ½), "iid-exact" (all p_i
    equal to one p ~ U[low, high], exact quadrature) or "product-mc" (p_i i.i.d.,
    seeded Monte Carlo; ``se`` is its standard error, 0 for exact values).
    """

    curve: str
    actual: str
    method: str
    value: float
    se: float = 0.0
    samples: int = 0


@dataclass(frozen=True)
class CurveResult:
    name: str
    family: str
    gamma: np.ndarray
    violation: float  # certificate: max over corner multisets of Pr[A(D)=o] − e^{mε}Pr[A(D′)=o] − δ
    certified: bool
    objectives: dict[float, float]  # prior μ → expected signed error (Eq. 196 without |·|)
    seconds: float
    info: dict = field(default_factory=dict)


@dataclass(frozen=True)
class PanelResult:
    label: str
    params: PrivacyParams
    curves: tuple[CurveResult, ...]
    p: np.ndarray
    error_curves: dict[str, np.ndarray]
    expected: tuple[ExpectedError, ...]

    def curve(self, name: str) -> CurveResult:
        for c in self.curves:
            if c.name == name:
                return c
        raise KeyError(name)

    def expected_value(self, curve: str, actual: str, method: str | None = None) -> ExpectedError:
        for e in self.expected:
            if e.curve == curve and e.actual == actual and (method is None or e.method == method):
                return e
        raise KeyError((curve, actual, method))


@dataclass(frozen=True)
class FigureResult:
    config: FigureConfig
    panels: tuple[PanelResult, ...]
    seconds: float


def build_gamma(curve: Curve, params: PrivacyParams) -> tuple[np.ndarray, dict]:
    """The γ table of a curve (γ_opt is certified inside the solver; the closed forms are
    certified by :func:`compute_panel`) and solver facts."""
    if curve.family == "opt":
        assert curve.prior_mean is not None  # Curve checks it for γ_opt
        t = darrm.solve(params, IIDPrior(curve.prior_mean), options=darrm.SolveOptions(method=curve.method),
                        progress=False)
        info = {k: v for k, v in t.info.items() if isinstance(v, (int, float, str, bool))}
        return t.gamma, {"solver": t.solver, "status": t.status, **info}
    g = darrm.family_gamma(curve.family, params, size=curve.size, tau=curve.tau, lam=curve.lam)
    return g, ({"tau": curve.tau, "lam": curve.lam} if curve.family == "const" else {})


def expected_errors(name: str, gamma: np.ndarray, actual: Actual, samples: int, seed: int) -> list[ExpectedError]:
    """Exact values where they exist, plus the i.i.d.-reading and a seeded MC otherwise."""
    if actual.is_point:
        return [ExpectedError(name, actual.name, "exact", iid_uniform_error(gamma, actual.low, actual.high))]
    out = [ExpectedError(name, actual.name, "iid-exact", iid_uniform_error(gamma, actual.low, actual.high))]
    if is_one_sided(actual.low, actual.high):
        out.append(ExpectedError(name, actual.name, "exact", product_uniform_error(gamma, actual.low, actual.high)))
    else:
        mean, se = product_uniform_error_mc(gamma, actual.low, actual.high, samples=samples, seed=seed)
        out.append(ExpectedError(name, actual.name, "product-mc", mean, se, samples))
    return out


def compute_panel(panel: Panel, cfg: FigureConfig) -> PanelResult:
    p = np.linspace(0.0, 1.0, int(cfg.p_points))
    curves, errs, expected = [], {}, []
    for curve in panel.curves:
        t0 = time.perf_counter()
        g, info = build_gamma(curve, panel.params)
        g, cert, scale = certify_tight(g, panel.params, progress=False)
        if scale != 1.0:
            info = {**info, "repair_scale": scale}
        objs = {mu: expected_signed_error(g, IIDPrior(mu)) for mu in cfg.objective_means}
        curves.append(CurveResult(curve.name, curve.family, g, cert.violation, cert.certified, objs,
                                  time.perf_counter() - t0, info))
        errs[curve.name] = error_curve(g, p)
        for actual in cfg.actuals:
            expected.extend(expected_errors(curve.name, g, actual, int(cfg.mc_samples), int(cfg.seed)))
    return PanelResult(panel.label, panel.params, tuple(curves), p, errs, tuple(expected))


def compute_figure(cfg: FigureConfig) -> FigureResult:
    """All panels of a figure (deterministic: the LP is exact, the MC seeded)."""
    t0 = time.perf_counter()
    panels = tuple(compute_panel(panel, cfg) for panel in cfg.panels)
    return FigureResult(cfg, panels, time.perf_counter() - t0)
