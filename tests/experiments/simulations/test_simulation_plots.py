"""The quick simulation figures: titles wrapped inside the canvas, nothing clipped (issue #16)."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from darrm.experiments.simulations import plots  # noqa: E402
from darrm.experiments.simulations.compute import compute_figure  # noqa: E402
from darrm.experiments.simulations.figures import figure2, figure9  # noqa: E402
from darrm.plotting import overflow_inches  # noqa: E402


@pytest.fixture(scope="module")
def quick():
    return [compute_figure(figure9(True)), compute_figure(figure2(True))]


@pytest.mark.parametrize("draw", [plots.plot_gammas, plots.plot_error_curves, plots.plot_expected])
def test_quick_figures_fit_their_canvas(quick, draw, tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(plots, "save_png", lambda fig, path, dpi: seen.append((fig, overflow_inches(fig))))
    for res in quick:
        draw(res, tmp_path / "x.png")
    assert len(seen) == len(quick)
    for fig, overflow in seen:
        assert overflow == 0.0, fig._suptitle.get_text()
        assert fig._suptitle.get_text().replace("\n", " ").startswith("Figure ")
        plots.pyplot().close(fig)
