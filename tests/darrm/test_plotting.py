"""Figures fit their canvas: wrapped titles, a clipping measure, and every privacy parameter
in the γ plot's title (issue #16)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import darrm  # noqa: E402
from darrm import plotting, report  # noqa: E402

LONG = "Figure 9: non-uniform prior, K = 11, ε = 0.1, pure DP — shape of γ functions, and some more words"


def _figure(width: float = 4.2):
    plt = plotting.pyplot()
    fig, ax = plt.subplots(figsize=(width, 3.2), layout="constrained")
    ax.plot([0, 1], [0, 1])
    return plt, fig


def test_overflow_measure_sees_a_clipped_title():
    plt, fig = _figure()
    fig.suptitle(LONG)  # the quick simulation figure's bug: wider than the figure
    assert plotting.overflow_inches(fig) > 0.5
    plt.close(fig)


def test_fit_suptitle_wraps_to_the_figure_width():
    plt, fig = _figure()
    title = plotting.fit_suptitle(fig, LONG)
    assert plotting.overflow_inches(fig) == 0.0
    assert "\n" in title.get_text() and title.get_text().replace("\n", " ") == LONG
    plt.close(fig)


def test_short_title_is_left_alone():
    plt, fig = _figure(8.0)
    assert plotting.fit_suptitle(fig, "K = 11").get_text() == "K = 11"
    plt.close(fig)


@pytest.mark.parametrize("member_delta", [1e-5, 0.0])
def test_gamma_plot_title_names_every_privacy_parameter(member_delta):
    params = darrm.PrivacyParams(K=11, m=3, eps=0.1, member_delta=member_delta)
    gammas = {"Sub": darrm.gamma_sub(11, 3), "const": np.full(12, 0.3)}
    fig = report.gamma_figure(gammas, params=params)
    text = fig._suptitle.get_text()
    for part in ("K=11", "m=3", "ε=0.1", f"Δ={member_delta:g}", f"δ={params.delta:.4g}"):
        assert part in text, (part, text)
    assert plotting.overflow_inches(fig) == 0.0
    plotting.pyplot().close(fig)


def test_plot_gammas_writes_the_png_with_the_full_title(tmp_path):
    params = darrm.PrivacyParams(K=11, m=3, eps=0.1, member_delta=1e-5)
    path = tmp_path / "g.png"
    report.plot_gammas({"Sub": darrm.gamma_sub(11, 3)}, str(path), params=params)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Δ=1e-05" in report.params_title(params) and "δ=3e-05" in report.params_title(params)


def test_fit_legend_uses_fewer_columns_when_a_row_would_be_clipped():
    plt, fig = _figure()
    lines = [fig.axes[0].plot([0, 1], [i, i], label=f"a rather long method name {i}")[0] for i in range(4)]
    legend = plotting.fit_legend(fig, lines, [ln.get_label() for ln in lines], ncol=4, fontsize=7)
    assert legend._ncols < 4 and plotting.overflow_inches(fig) == 0.0
    plt.close(fig)
    plt, fig = _figure(16.0)
    lines = [fig.axes[0].plot([0, 1], [i, i], label=f"m{i}")[0] for i in range(4)]
    assert plotting.fit_legend(fig, lines, [f"m{i}" for i in range(4)], ncol=4)._ncols == 4  # room: one row
    plt.close(fig)

