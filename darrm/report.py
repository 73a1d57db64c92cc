"""Plain-text tables and optional matplotlib plots of γ tables and their error curves."""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .atomic import atomic_write_bytes
from .errors import ParameterError
from .plotting import fit_suptitle, pyplot
from .utility import error_curve

DEFAULT_P_GRID = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.975, 1.0)


def format_table(header: Sequence[str], rows: Sequence[Sequence[object]], *,
                 number_format: Callable[[object], str] | None = None, left_strings: bool = False,
                 title: str | None = None) -> str:
    """A plain-text table: a header, a rule, one line per row, columns right-aligned.

    Cells that are not strings are written with ``number_format`` (default ``f"{c:.4f}"``).
    ``left_strings=True`` left-aligns (header included) every column whose first row holds a
    string, and strips trailing blanks; ``title`` is a first line above the header."""
    if any(len(r) != len(header) for r in rows):
        raise ParameterError("rows", f"every row needs exactly one cell per header column ({len(header)})")
    fmt = number_format or (lambda c: f"{c:.4f}")
    cells = [[str(h) for h in header]] + [[c if isinstance(c, str) else fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    left = [left_strings and (not rows or isinstance(rows[0][i], str)) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) if lj else c.rjust(w) for c, w, lj in zip(r, widths, left, strict=True)) for r in cells
    ]
    if left_strings:
        lines = [line.rstrip() for line in lines]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if title:
        lines.insert(0, title)
    return "\n".join(lines)


def gamma_table_text(gammas: Mapping[str, np.ndarray]) -> str:
    """γ(l) per family, one row per l."""
    names = list(gammas)
    K = len(next(iter(gammas.values()))) - 1
    rows = [[str(l)] + [float(gammas[n][l]) for n in names] for l in range(K + 1)]
    return format_table(["l"] + [f"γ_{n}" for n in names], rows)


def error_curve_text(gammas: Mapping[str, np.ndarray], p_grid: Sequence[float] = DEFAULT_P_GRID) -> str:
    """Exact E(DaRRM_γ) for i.i.d. mechanisms at each p (symmetric: E(p) = E(1−p))."""
    names = list(gammas)
    curves = {n: error_curve(gammas[n], np.asarray(p_grid)) for n in names}
    rows = [[f"{p:g}"] + [float(curves[n][i]) for n in names] for i, p in enumerate(p_grid)]
    return format_table(["p"] + [f"E(γ_{n})" for n in names], rows)


def params_title(params) -> str:
    """Every privacy parameter of a table, for a plot title: K, m, ε, Δ and δ (the target
    (mε, δ))."""
    return (f"K={params.K}, m={params.m:g}, ε={params.eps:g}, Δ={params.member_delta:g}, δ={params.delta:.4g}"
            f" — target ({params.m * params.eps:g}, {params.delta:.4g})-DP")


def gamma_figure(gammas: Mapping[str, np.ndarray], title: str = "", params=None):
    """The figure of :func:`plot_gammas` (returned open, for inspection)."""
    plt = pyplot("plotting γ tables")
    K = len(next(iter(gammas.values()))) - 1
    p = np.linspace(0.0, 1.0, 401)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4.4), layout="constrained")
    for n, g in gammas.items():
        a1.plot(np.arange(K + 1), g, marker="o", label=f"γ_{n}")
        a2.plot(p, error_curve(g, p), label=f"γ_{n}")
    a1.set_xlabel("support l ∈ {0..K}")
    a1.set_ylabel("γ(l)")
    a1.set_ylim(-0.02, 1.02)
    a1.set_title("Shape of γ")
    a2.set_xlabel("p (i.i.d. mechanisms)")
    a2.set_ylabel("E(DaRRM_γ) (exact)")
    a2.set_title("Error")
    a1.legend()
    a2.legend()
    full = ", ".join(t for t in (title, params_title(params) if params is not None else "") if t)
    if full:
        fit_suptitle(fig, full)
    return fig


def plot_gammas(gammas: Mapping[str, np.ndarray], path: str, title: str = "", params=None) -> None:
    """PNG with the γ shapes (left) and the exact i.i.d. error curves (right).

    ``params`` (a :class:`~darrm.params.PrivacyParams`) puts every privacy parameter — K, m, ε,
    Δ, δ — in the title (:func:`params_title`); ``title`` is prepended."""
    plt = pyplot("plotting γ tables")
    fig = gamma_figure(gammas, title, params)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())
