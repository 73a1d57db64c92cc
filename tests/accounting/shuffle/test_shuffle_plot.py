"""The shuffle plot shows the tightest valid upper bound, the best lower bound and the gap
between them, keeps coincident curves visible, and fits its canvas (issue #16)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from darrm.accounting.shuffle import plot as shuffle_plot  # noqa: E402
from darrm.accounting.shuffle.best import all_bounds, best_upper_bound, randomizer_for  # noqa: E402
from darrm.plotting import overflow_inches, pyplot  # noqa: E402


@pytest.fixture(scope="module")
def figure():
    fig = shuffle_plot.eps_vs_n_figure(2000, [1.0, 4.0], 1e-4, classes=2, points=3)
    yield fig
    pyplot().close(fig)


def _legend_labels(fig) -> list[str]:
    return [t.get_text() for leg in fig.legends for t in leg.get_texts()]


def test_legend_has_both_envelopes_and_the_gap(figure):
    labels = _legend_labels(figure)
    assert "tightest valid upper bound (min)" in labels
    assert "best lower bound (max)" in labels
    assert any(lab.startswith("gap") for lab in labels)
    assert any("(lower bound)" in lab for lab in labels) and any("(upper bound)" in lab for lab in labels)


def test_envelopes_are_the_best_valid_bounds(figure):
    ax = figure.axes[0]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    ns, up = lines["tightest valid upper bound (min)"].get_data()
    _, low = lines["best lower bound (max)"].get_data()
    r = randomizer_for(1.0, 2)
    for n, u, lo in zip(ns, up, low, strict=True):
        assert u == pytest.approx(best_upper_bound(r, int(n), delta=1e-4).eps, rel=1e-12)
        lows = [b.eps for b in all_bounds(r, int(n), delta=1e-4) if b.kind == "lower"]
        assert lo == pytest.approx(max(lows), rel=1e-12)
        assert lo <= u
    assert len(ax.collections) >= 1  # the shaded gap


def test_every_method_has_its_own_marker_and_size(figure):
    ax = figure.axes[0]
    styles = [(ln.get_marker(), ln.get_markersize()) for ln in ax.get_lines()
              if ln.get_label().endswith(("(upper bound)", "(lower bound)"))]
    assert len(styles) >= 4 and len(set(styles)) == len(styles)


def test_nothing_is_clipped(figure):
    assert overflow_inches(figure) == 0.0
    assert "δ = 0.0001" in figure._suptitle.get_text() and "2-ary" in figure._suptitle.get_text()


def test_envelope_ignores_missing_methods():
    ns = np.array([100, 1000])
    data = {("a", "upper"): {100: 2.0, 1000: 1.0}, ("b", "upper"): {1000: 0.5}, ("c", "lower"): {1000: 0.1}}
    up, low = shuffle_plot.envelope(ns, data, "upper"), shuffle_plot.envelope(ns, data, "lower")
    assert list(up) == [2.0, 0.5] and math.isnan(low[0]) and low[1] == 0.1


def test_one_eps0_panel_does_not_clip_its_legend():
    """Issue 23: with one ε0 the 3-column legend of long labels was wider than the figure."""
    fig = shuffle_plot.eps_vs_n_figure(2000, [1.0], 1e-4, classes=2, points=3)
    try:
        assert overflow_inches(fig) == 0.0
        fig.canvas.draw()
        box = fig.legends[0].get_window_extent()
        assert box.x0 >= 0 and box.x1 <= fig.bbox.width
    finally:
        pyplot().close(fig)
