"""The PATE accuracy plot: no marker hidden under another at a single m, error bars stated,
nothing clipped (issue #16)."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from darrm.experiments.pate import report  # noqa: E402
from darrm.plotting import overflow_inches, pyplot  # noqa: E402

METHODS = ("gnmax-paper", "gnmax-tight", "darrm-sub", "darrm-opt", "majority-private-parallel", "majority-nonprivate")


def _records(ms, Qs=(20,), draws=10):
    return [{"dataset": "mnist", "method": meth, "m": m, "Q": Q, "accuracy_mean": 0.8, "accuracy_std": 0.05,
             "draws": draws} for meth in METHODS for m in ms for Q in Qs]


def _x_positions(ax):
    return [float(x) for c in ax.containers for x in c.lines[0].get_xdata()]


def test_quick_run_with_one_m_spreads_the_methods():
    fig = report.accuracy_figure(_records([3]))
    ax = fig.axes[0]
    xs = _x_positions(ax)
    assert len(xs) == len(METHODS) and len(set(xs)) == len(METHODS)  # equal accuracies, still all visible
    assert max(xs) - min(xs) > 0.3 and min(xs) > ax.get_xlim()[0] and max(xs) < ax.get_xlim()[1]
    assert list(ax.get_xticks()) == [3]
    pyplot().close(fig)


def test_error_bars_are_stated_and_nothing_is_clipped():
    fig = report.accuracy_figure(_records([1, 3, 5, 7], Qs=(20, 50, 100), draws=10))
    title = fig._suptitle.get_text().replace("\n", " ")
    assert "±1 s.d." in title and "10 draws" in title
    assert overflow_inches(fig) == 0.0
    legend = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert legend == list(METHODS)
    pyplot().close(fig)


def test_markers_differ_between_methods():
    fig = report.accuracy_figure(_records([1, 3]))
    markers = [c.lines[0].get_marker() for c in fig.axes[0].containers]
    assert len(set(markers)) == len(METHODS)
    pyplot().close(fig)
