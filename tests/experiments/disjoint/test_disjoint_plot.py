"""The disjoint synthetic plot keeps coincident methods visible and fits its canvas (issue #16)."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from darrm.experiments.disjoint import output  # noqa: E402
from darrm.experiments.disjoint.synthetic import METHODS  # noqa: E402
from darrm.plotting import overflow_inches, pyplot  # noqa: E402


def test_coincident_methods_stay_visible_and_nothing_is_clipped():
    rows = [{"K": k, **{m: 0.9 for m in METHODS}} for k in (11, 101, 1001)]  # every curve on top of the others
    title = "per-query (0.5, 1e-06)-DP, agreement U[0.55, 0.95], a long title that must wrap inside the figure"
    fig = output.synthetic_figure(rows, title)
    lines = fig.axes[0].get_lines()
    assert len({(ln.get_marker(), ln.get_markersize()) for ln in lines}) == len(METHODS)
    assert all(ln.get_markerfacecolor() == "none" for ln in lines)  # hollow: the ones below show through
    assert overflow_inches(fig) == 0.0
    pyplot().close(fig)
