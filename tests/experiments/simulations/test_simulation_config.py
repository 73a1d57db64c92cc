"""Figure settings are validated once, by the shared vocabulary; errors name the field."""

from __future__ import annotations

import pytest

from darrm import ParameterError, PrivacyParams
from darrm.experiments.simulations.config import Actual, Curve, FigureConfig, Panel

P = PrivacyParams(11, 3, 0.1, 0.0, delta=0.0)


@pytest.mark.parametrize("kw,field", [({"family": "laplace"}, "family"), ({"family": "opt"}, "prior_mean"),
                                      ({"family": "sub"}, "size"), ({"family": "const", "tau": 1.0}, "tau")])
def test_curve_names_the_bad_field(kw, field):
    with pytest.raises(ParameterError, match=field):
        Curve("c", **kw)


@pytest.mark.parametrize("low,high", [(-0.1, 0.5), (0.6, 0.5), (0.0, float("nan"))])
def test_actual_refuses_bad_intervals(low, high):
    with pytest.raises(ParameterError, match="interval"):
        Actual("a", low, high)


@pytest.mark.parametrize("kw,field", [({"mc_samples": 1}, "mc_samples"), ({"p_points": 2}, "p_points"),
                                      ({"panels": ()}, "panels"), ({"actuals": ()}, "actuals")])
def test_figure_config_names_the_bad_field(kw, field):
    panel = Panel("p", P, (Curve("Sub", "sub", size=3),))
    with pytest.raises(ParameterError, match=field):
        FigureConfig(**{"key": "k", "title": "t", "panels": (panel,), **kw})
