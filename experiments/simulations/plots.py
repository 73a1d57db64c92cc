"""PNG plots of a computed figure (matplotlib, Agg backend).

``{key}_gamma.png``    γ shapes, one subplot per panel (the paper's "Shape of γ functions");
``{key}_error.png``    exact error curves E(DaRRM_γ) for p_1 = … = p_K = p ∈ [0, 1];
``{key}_expected.png`` expected error per γ under each actual distribution: exact values
                       as filled markers; the seeded Monte-Carlo estimate of
                       E_{p_i ~ U i.i.d.} as hollow markers with 95% intervals.
Colours follow the reference code: γ_opt red, γ_Sub blue, γ_DSub cyan, γ_const green
(γ_opt-P magenta).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from darrm.experiments.png import pyplot, save_png
from darrm.plotting import fit_suptitle

from .compute import FigureResult

if TYPE_CHECKING:  # matplotlib is optional (the `plot` and `experiments` extras)
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

COLOURS = {"opt": "red", "opt-U": "red", "opt-P": "magenta", "Sub": "blue", "DSub": "cyan", "const": "green"}
STYLES = {"opt": "-", "opt-U": "-", "opt-P": "-", "Sub": "--", "DSub": ":", "const": "-."}


def _grid(n: int) -> tuple[int, int]:
    cols = 1 if n == 1 else 2 if n <= 4 else 3
    return math.ceil(n / cols), cols


def _subplots(n: int, w: float = 4.2, h: float = 3.2) -> tuple[Figure, list[Axes]]:
    plt = pyplot("the simulation plots")
    r, c = _grid(n)
    fig, axes = plt.subplots(r, c, figsize=(w * c, h * r + 0.6), squeeze=False, layout="constrained")
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _label(name: str) -> str:
    return f"γ_{name}"


def _finish(fig: Figure, handles: list[Artist], labels: list[str], title: str) -> None:
    """Figure-level legend below the panels (never over a curve) and a suptitle wrapped to the
    figure's width (a one-panel quick figure is narrower than its title)."""
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 4), fontsize=9, frameon=False)
    fit_suptitle(fig, title)


def plot_gammas(res: FigureResult, path: Path) -> None:
    fig, axes = _subplots(len(res.panels))
    for ax, pr in zip(axes, res.panels, strict=True):
        K = pr.params.K
        l = np.arange(K + 1)
        for c in pr.curves:
            ax.plot(l, c.gamma, STYLES.get(c.name, "-"), color=COLOURS.get(c.name), marker="o" if K <= 35 else None,
                    ms=3, lw=1.5, label=_label(c.name))
        ax.set_title(pr.label)
        ax.set_xticks([0, K / 2, K])
        ax.set_yticks([0, 0.5, 1])
        ax.set_ylim(-0.03, 1.05)
        ax.set_xlabel("support l ∈ {0..K}")
        ax.set_ylabel("γ(l)")
    _finish(fig, *axes[0].get_legend_handles_labels(), f"{res.config.title} — shape of γ functions")
    save_png(fig, path, dpi=110)


def plot_error_curves(res: FigureResult, path: Path) -> None:
    fig, axes = _subplots(len(res.panels))
    for ax, pr in zip(axes, res.panels, strict=True):
        for c in pr.curves:
            ax.plot(pr.p, pr.error_curves[c.name], STYLES.get(c.name, "-"), color=COLOURS.get(c.name), lw=1.5,
                    label=_label(c.name))
        ax.set_title(pr.label)
        ax.set_xlabel("p (p_1 = … = p_K = p)")
        ax.set_ylabel("E(DaRRM_γ), exact")
        ax.set_xlim(0, 1)
        ax.set_ylim(bottom=0)
    _finish(fig, *axes[0].get_legend_handles_labels(), f"{res.config.title} — exact error for i.i.d. mechanisms")
    save_png(fig, path, dpi=110)


def plot_expected(res: FigureResult, path: Path) -> None:
    actuals = [a.name for a in res.config.actuals]
    n = len(res.panels) * len(actuals)
    plt = pyplot("the simulation plots")
    if len(actuals) > 1:
        size = (3.6 * len(actuals), 3.2 * len(res.panels) + 0.6)
        fig, ax2 = plt.subplots(len(res.panels), len(actuals), figsize=size, squeeze=False, layout="constrained")
        cells = [(ax2[i, j], pr, a) for i, pr in enumerate(res.panels) for j, a in enumerate(actuals)]
    else:
        fig, axes = _subplots(n, 3.8, 3.0)
        cells = [(ax, pr, actuals[0]) for ax, pr in zip(axes, res.panels, strict=True)]
    for ax, pr, a in cells:
        names = [c.name for c in pr.curves]
        x = np.arange(len(names))
        for i, name in enumerate(names):
            col = COLOURS.get(name)
            for e in pr.expected:
                if e.curve != name or e.actual != a:
                    continue
                if e.method == "product-mc":
                    ax.errorbar(i + 0.22, e.value, yerr=1.96 * e.se, fmt="o", mfc="none", color=col, capsize=3)
                elif e.method == "iid-exact":
                    ax.plot(i - 0.22, e.value, "s", color=col)
                else:
                    ax.plot(i, e.value, "D", color=col)
        ax.set_xticks(x)
        ax.set_xticklabels([_label(nm) for nm in names], fontsize=8)
        ax.set_xlim(-0.6, len(names) - 0.4)
        ax.set_ylim(bottom=0)
        ax.set_title(f"{pr.label}, actual {a}", fontsize=9)
        ax.set_ylabel("E(DaRRM_γ)")
    methods = {e.method for pr in res.panels for e in pr.expected}
    Line2D = plt.Line2D
    proxies = [
        ("iid-exact", Line2D([], [], ls="", marker="s", color="k"), "exact: p_1 = … = p_K = p, p ~ actual"),
        ("exact", Line2D([], [], ls="", marker="D", color="k"), "exact: p_i i.i.d. ~ actual (one-sided or point)"),
        ("product-mc", Line2D([], [], ls="", marker="o", mfc="none", color="k"),
         f"Monte Carlo: p_i i.i.d. ~ actual, {res.config.mc_samples} draws, seed {res.config.seed} (95% CI)"),
    ]
    used = [(h, lab) for m, h, lab in proxies if m in methods]
    fig.legend([h for h, _ in used], [lab for _, lab in used], loc="outside lower center", ncol=1, fontsize=8,
               frameon=False)
    fit_suptitle(fig, f"{res.config.title} — expected error (the three estimates side by side at each γ)")
    save_png(fig, path, dpi=110)


def write_figure_plots(res: FigureResult, out_dir: str | Path) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    key = res.config.key
    paths = [out / f"{key}_gamma.png", out / f"{key}_error.png", out / f"{key}_expected.png"]
    plot_gammas(res, paths[0])
    plot_error_curves(res, paths[1])
    plot_expected(res, paths[2])
    return paths
