"""ε-vs-n plot of the shuffle bounds (``darrm shuffle --plot``); matplotlib via
:func:`darrm.plotting.pyplot`.

Each panel shows every valid bound that applies (upper bounds solid, lower bounds dashed, each
method its own marker, hollow and of decreasing size so that coincident curves stay visible),
the **tightest valid upper bound** (the minimum over methods, thick black) and the **best lower
bound** (the maximum, thick grey), with the gap between them shaded: the true ε(δ) of the
shuffled protocol lies in the shaded band.
"""

from __future__ import annotations

import io
import itertools
import math

import numpy as np

from darrm.atomic import atomic_write_bytes
from darrm.plotting import fit_suptitle, pyplot

from .best import all_bounds, randomizer_for

MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "h", "<", ">")


def series(n: int, eps0: float, delta: float, classes: int | None = None, points: int = 7,
           methods: list[str] | None = None) -> tuple[np.ndarray, dict[tuple[str, str], dict[int, float]]]:
    """``(ns, {(method, kind): {n: ε}})`` for ``points`` log-spaced n from 100 to ``n`` (valid bounds only)."""
    ns = np.unique(np.logspace(2, math.log10(max(n, 200)), points).astype(int))
    out: dict[tuple[str, str], dict[int, float]] = {}
    for m in ns:
        for b in all_bounds(randomizer_for(eps0, classes), int(m), delta=delta, methods=methods):
            if not b.valid:  # a method asked for by name that does not apply here
                continue
            out.setdefault((b.method, b.kind), {})[int(m)] = b.eps
    return ns, out


def envelope(ns: np.ndarray, data: dict[tuple[str, str], dict[int, float]], kind: str) -> np.ndarray:
    """Best bound of ``kind`` at each n: the minimum of the upper bounds, the maximum of the lower
    bounds (NaN where no method of that kind applies)."""
    pick = min if kind == "upper" else max
    vals = []
    for m in ns:
        got = [pts[int(m)] for (_, k), pts in data.items() if k == kind and int(m) in pts]
        vals.append(pick(got) if got else math.nan)
    return np.array(vals, dtype=float)


def eps_vs_n_figure(n: int, eps0s: list[float], delta: float, classes: int | None = None, points: int = 7,
                    methods: list[str] | None = None):
    """The figure of :func:`plot_eps_vs_n`, returned open (for inspection)."""
    plt = pyplot("the shuffle plot")
    # one panel: wider and a 2-column legend, so the legend's long labels are not clipped
    fig, axes = plt.subplots(1, len(eps0s), figsize=(max(6.8, 5.2 * len(eps0s)), 4.6), squeeze=False,
                             layout="constrained")
    name = "generic ε0-LDP randomizer" if classes is None else f"{classes}-ary randomized response"
    handles: dict[str, object] = {}
    for ax, e0 in zip(axes[0], eps0s, strict=True):
        ns, data = series(n, e0, delta, classes, points, methods)
        styles = zip(sorted(data), itertools.cycle(MARKERS), strict=False)
        for i, ((meth, kind), marker) in enumerate(styles):
            xs = sorted(data[(meth, kind)])
            h, = ax.plot(xs, [data[(meth, kind)][x] for x in xs], ls="-" if kind == "upper" else "--", lw=1.0,
                         marker=marker, mfc="none", ms=max(3.0, 9.0 - 1.0 * i), alpha=0.85,
                         label=f"{meth} ({kind} bound)")
            handles.setdefault(h.get_label(), h)
        up, low = envelope(ns, data, "upper"), envelope(ns, data, "lower")
        h_up, = ax.plot(ns, up, color="black", lw=2.6, alpha=0.55, zorder=1, label="tightest valid upper bound (min)")
        h_low, = ax.plot(ns, low, color="grey", lw=2.6, ls="--", alpha=0.55, zorder=1, label="best lower bound (max)")
        both = ~(np.isnan(up) | np.isnan(low))
        h_gap = ax.fill_between(ns, low, up, where=both, color="tab:orange", alpha=0.2, zorder=0,
                                label="gap: the true ε lies here")
        for h in (h_up, h_low, h_gap):
            handles.setdefault(h.get_label(), h)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (users shuffled)")
        ax.set_ylabel(f"ε of the shuffled output at δ = {delta:g}")
        ax.set_title(f"ε0 = {e0:g}")
        ax.grid(alpha=0.3, which="both")
    fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=2 if len(eps0s) == 1 else 3,
               fontsize=7, frameon=False)
    fit_suptitle(fig, f"Privacy amplification by shuffling: {name}, δ = {delta:g}, n ≤ {n:g}")
    return fig


def plot_eps_vs_n(path: str, n: int, eps0s: list[float], delta: float, classes: int | None = None,
                  points: int = 7) -> None:
    """One panel per ε0: ε(δ) of every valid bound at ``points`` log-spaced n up to ``n``, with
    the tightest valid upper bound, the best lower bound and the gap between them; saved as PNG.
    The slow bounds (optimal decomposition, FFT lower bound) take up to seconds per point at
    n ≈ 1e6; ``points`` trades resolution for time."""
    plt = pyplot("the shuffle plot")
    fig = eps_vs_n_figure(n, eps0s, delta, classes, points)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)  # PNG whatever the suffix (matplotlib would guess from it)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())
