"""The one optional loader of matplotlib (the ``plot`` extra), headless, and the helpers every
figure of the project uses so that nothing is clipped: titles wrapped to the figure width,
legends in as many columns as fit, and a measure of how far a figure's content sticks out of its canvas."""

from __future__ import annotations

import textwrap

from .errors import require

#: a title line may use this fraction of the figure width
TITLE_WIDTH = 0.96


def pyplot(purpose: str = "plotting"):
    """``matplotlib.pyplot`` on the non-interactive Agg backend, or a one-line
    :class:`~darrm.errors.MissingDependencyError` naming ``pip install 'darrm[plot]'``."""
    matplotlib = require("matplotlib", "plot", purpose)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _wrap_to(text_artist, text: str, width_px: float) -> None:
    """Re-wrap ``text_artist`` (a Text) at word boundaries until every line is ≤ ``width_px`` wide."""
    renderer = text_artist.figure.canvas.get_renderer()
    chars = max(len(line) for line in text.splitlines()) if text else 0
    text_artist.set_text(text)
    while chars > 10 and text_artist.get_window_extent(renderer).width > width_px:
        chars = int(chars * 0.9)
        text_artist.set_text("\n".join(textwrap.fill(p, chars) for p in text.splitlines()))


def fit_suptitle(fig, text: str, **kwargs):
    """``fig.suptitle(text)`` wrapped at word boundaries so that it fits the figure's width
    (with constrained or tight layout the lines then get their own room above the panels)."""
    title = fig.suptitle(text, **kwargs)
    _wrap_to(title, text, TITLE_WIDTH * fig.bbox.width)
    return title


def fit_legend(fig, handles, labels, *, ncol: int, **kwargs):
    """A figure-level legend below the panels (``loc="outside lower center"``, constrained layout)
    in at most ``ncol`` columns, fewer when a row of ``ncol`` entries would be wider than the figure
    (a one-panel figure then gets its legend in two rows rather than clipped at both edges).

    Args:
        fig: a figure with ``layout="constrained"``.
        handles: the legend's artists.
        labels: their labels, one per handle.
        ncol: the most columns wanted (≥ 1).
        **kwargs: passed on to ``fig.legend`` (``fontsize``, ``frameon``, ...).

    Returns:
        The legend.
    """
    renderer = fig.canvas.get_renderer()
    for n in range(max(1, min(ncol, len(labels))), 0, -1):
        legend = fig.legend(handles, labels, loc="outside lower center", ncol=n, **kwargs)
        if n == 1 or legend.get_window_extent(renderer).width <= TITLE_WIDTH * fig.bbox.width:
            return legend
        legend.remove()
    raise AssertionError("unreachable: the one-column legend is always returned")


def overflow_inches(fig) -> float:
    """How far (inches) the drawn content of ``fig`` extends beyond its canvas on any side;
    0.0 when nothing is clipped.  Draws the figure first (layout engines run at draw time)."""
    fig.canvas.draw()
    tight = fig.get_tightbbox(fig.canvas.get_renderer())
    w, h = fig.get_size_inches()
    return float(max(0.0, -tight.x0, -tight.y0, tight.x1 - w, tight.y1 - h))
