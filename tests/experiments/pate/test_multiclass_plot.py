"""The ten-class student plot fits its canvas (legend and title), even with one panel."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from darrm import plotting  # noqa: E402
from darrm.experiments.pate.multiclass_report import _ORDER, multiclass_figure  # noqa: E402


def test_the_ten_class_quick_plot_keeps_its_legend_on_the_canvas():
    """The quick run has one Q, so one panel: a four-column legend was clipped at both edges."""
    records = [{"method": m, "Q": 20, "epsilon_total": e, "student_accuracy_mean": 0.5 + 0.1 * e,
                "student_accuracy_std": 0.01, "dataset": "mnist"} for m in _ORDER for e in (0.5, 2.0)]
    fig = multiclass_figure(records)
    assert plotting.overflow_inches(fig) == 0.0
    plotting.pyplot().close(fig)
