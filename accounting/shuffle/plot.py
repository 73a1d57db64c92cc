"""ε-vs-n plot of the fast shuffle bounds (``darrm shuffle --plot``); matplotlib via
:func:`darrm.plotting.pyplot`."""

from __future__ import annotations

import io
import math

import numpy as np

from darrm.atomic import atomic_write_bytes
from darrm.plotting import pyplot

from .best import all_bounds, randomizer_for

#: fast methods only (the FFT and k-RR bounds take seconds per point at large n)
PLOT_METHODS = ["erlingsson", "blanket-hoeffding", "blanket-bennett", "clones", "variation-ratio"]


def plot_eps_vs_n(path: str, n: int, eps0s: list[float], delta: float, classes: int | None = None) -> None:
    """One panel per ε0: ε(δ) of each fast method at 7 log-spaced n up to ``n``, saved as PNG."""
    plt = pyplot("the shuffle plot")
    ns = np.unique(np.logspace(2, math.log10(max(n, 200)), 7).astype(int))
    fig, axes = plt.subplots(1, len(eps0s), figsize=(5 * len(eps0s), 4), squeeze=False)
    for ax, e0 in zip(axes[0], eps0s):
        series: dict[tuple[str, str], list[tuple[int, float]]] = {}
        for m in ns:
            for b in all_bounds(randomizer_for(e0, classes), int(m), delta=delta, methods=PLOT_METHODS):
                series.setdefault((b.method, b.kind), []).append((int(m), b.eps))
        for (meth, kind), pts in sorted(series.items()):
            xs, ys = zip(*pts)
            ax.plot(xs, ys, "-o" if kind == "upper" else "--x", label=f"{meth} ({kind})", ms=3)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n")
        ax.set_ylabel(f"eps at delta={delta:g}")
        ax.set_title(("generic" if classes is None else f"{classes}-RR") + f", eps0={e0:g}")
        ax.legend(fontsize=6)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120)  # PNG whatever the suffix (matplotlib would guess from it)
    plt.close(fig)
    atomic_write_bytes(path, buf.getvalue())
