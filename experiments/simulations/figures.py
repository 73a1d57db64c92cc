"""Per-figure configurations of the DaRRM paper's simulations (Section 6.1, Appendix D.1:
Figures 2 and 6–9).  Each builder takes ``quick`` (fewer panels and Monte-Carlo
draws, same settings otherwise) and returns a :class:`~.config.FigureConfig`.

Priors: μ = 0.75 is the paper's uniform prior (integration over [0.5, 1]^K, Eq. 202);
μ = 0.85 its T_P (integration over [0.7, 1]^K, Eq. 204) — the exact expectation of the
paper's Monte-Carlo objective (Algorithm 5, Appendix C.2.2).
"""

from __future__ import annotations

from collections.abc import Callable

from darrm import PrivacyParams
from darrm.accounting.paper import table3_rows
from darrm.numerics.delta import composed_delta

from .config import UNIFORM_01, Actual, Curve, FigureConfig, Panel

EPS = 0.1
MU_UNIFORM = 0.75
MU_TP = 0.85


def _budget(quick: bool, full: int) -> dict:
    return {"mc_samples": 2_000 if quick else full, "p_points": 101 if quick else 401}


def figure2(quick: bool = False) -> FigureConfig:
    """Fig. 2 (E1): K = 11, Δ = 1e-5, δ = 1 − (1−Δ)^m; γ_opt, γ_Sub, γ_const.

    γ_const: τ, λ are not given for Fig. 2; the majority of K is taken (Kε, 1−(1−Δ)^K)-DP
    (simple composition with the same δ rule as the target; the reference code uses KΔ)."""
    K, Delta = 11, 1e-5
    ms = (1, 3) if quick else (1, 3, 5, 7)
    panels = tuple(
        Panel(f"m = {m}", PrivacyParams(K, m, EPS, Delta), (
            Curve("opt", "opt", prior_mean=MU_UNIFORM),
            Curve("Sub", "sub", size=m),
            Curve("const", "const", tau=float(K), lam=composed_delta(Delta, K)),
        ))
        for m in ms
    )
    return FigureConfig("figure2", "Figure 2: K = 11, ε = 0.1, Δ = 1e-5, δ = 1−(1−Δ)^m", panels,
                        **_budget(quick, 100_000))


def figure6(quick: bool = False) -> FigureConfig:
    """Fig. 6 (E2): K = 35, M subsampled, (mε, δ) from general composition (Table 3)."""
    K, Delta = 35, 1e-5
    rows = table3_rows(k=K, eps=EPS, delta=Delta, delta_prime=0.1)
    if quick:
        rows = rows[:1]
    panels = tuple(
        Panel(f"M = {r.subsampled}", PrivacyParams(K, r.m, EPS, Delta, delta=r.delta), (
            Curve("opt", "opt", prior_mean=MU_UNIFORM),
            Curve("Sub", "sub", size=r.subsampled),
            Curve("const", "const", tau=r.tau, lam=r.lam),
        ))
        for r in rows
    )
    return FigureConfig(
        "figure6", "Figure 6: K = 35, ε = 0.1, Δ = 1e-5, δ′ = 0.1 (general composition)", panels,
        notes=("γ_Sub subsamples M mechanisms (not m); m, δ, τ, λ from Table 3 (computed)",),
        **_budget(quick, 50_000),
    )


def _pure(K: int, ms: tuple[int, ...], method: str) -> tuple[Panel, ...]:
    return tuple(
        Panel(f"m = {m}", PrivacyParams(K, m, EPS, 0.0, delta=0.0), (
            Curve("opt", "opt", prior_mean=MU_UNIFORM, method=method),
            Curve("Sub", "sub", size=m),
            Curve("DSub", "dsub", size=m),
            Curve("const", "const", tau=float(K), lam=0.0),
        ))
        for m in ms
    )


def figure7(quick: bool = False) -> FigureConfig:
    """Fig. 7 (E3): pure DP, K = 11, m ∈ {1, 3, 5, 7, 9, 11}; γ_opt, γ_Sub, γ_DSub, γ_const."""
    ms = (1, 3, 7) if quick else (1, 3, 5, 7, 9, 11)
    return FigureConfig("figure7", "Figure 7: pure DP, K = 11, ε = 0.1", _pure(11, ms, "auto"),
                        **_budget(quick, 100_000))


def figure8(quick: bool = False) -> FigureConfig:
    """Fig. 8 (E4): pure DP, K = 101, m ∈ {10, 20, 30, 40, 60, 80} (γ_opt by constraint
    generation: same certified optimum as the full LP, ~5x faster at K = 101)."""
    ms = (10, 60) if quick else (10, 20, 30, 40, 60, 80)
    return FigureConfig(
        "figure8", "Figure 8: pure DP, K = 101, ε = 0.1", _pure(101, ms, "cutting-planes"), **_budget(quick, 20_000)
    )


def figure9(quick: bool = False) -> FigureConfig:
    """Fig. 9 (E5): non-uniform prior, K = 11, m ∈ {3, 5}, Δ = δ = 0; γ_opt-U (μ = 0.75)
    vs γ_opt-P (μ = 0.85), errors under U[0,1], p_i = 0.5 and U[0, 0.1]."""
    K = 11
    ms = (3,) if quick else (3, 5)
    panels = tuple(
        Panel(f"m = {m}", PrivacyParams(K, m, EPS, 0.0, delta=0.0), (
            Curve("opt-U", "opt", prior_mean=MU_UNIFORM),
            Curve("opt-P", "opt", prior_mean=MU_TP),
            Curve("Sub", "sub", size=m),
            Curve("const", "const", tau=float(K), lam=0.0),
        ))
        for m in ms
    )
    return FigureConfig(
        "figure9", "Figure 9: non-uniform prior, K = 11, ε = 0.1, pure DP", panels,
        actuals=(UNIFORM_01, Actual("p=0.5", 0.5, 0.5), Actual("U[0,0.1]", 0.0, 0.1)),
        objective_means=(MU_UNIFORM, MU_TP),
        **_budget(quick, 100_000),
    )


FIGURES: dict[str, Callable[[bool], FigureConfig]] = {
    "2": figure2, "6": figure6, "7": figure7, "8": figure8, "9": figure9,
}
