"""Bad input raises ParameterError naming the parameter."""

import math

import pytest

from darrm.accounting import (
    Bound,
    FiniteRandomizer,
    GenericLDP,
    RandomizedResponse,
    all_bounds,
    best_upper_bound,
)
from darrm.accounting.shuffle.variation_ratio import VRParams, vr_delta
from darrm.errors import ParameterError


@pytest.mark.parametrize("bad", [0, -1, math.nan, math.inf])
def test_eps0_must_be_positive_finite(bad):
    with pytest.raises(ParameterError, match="eps0"):
        GenericLDP(bad)
    with pytest.raises(ParameterError, match="eps0"):
        RandomizedResponse(bad, 3)


def test_k_and_matrix_validated():
    with pytest.raises(ParameterError, match="k"):
        RandomizedResponse(1.0, 1)
    with pytest.raises(ParameterError, match="matrix"):
        FiniteRandomizer.from_array([[0.5, 0.6], [0.5, 0.5]])
    with pytest.raises(ParameterError, match="matrix"):
        FiniteRandomizer.from_array([[1.0, 0.0], [0.5, 0.5]])  # not pure LDP
    with pytest.raises(ParameterError, match="matrix"):
        FiniteRandomizer.from_array([[0.5, 0.5], [0.5, 0.5]])


@pytest.mark.parametrize("kw,name", [({"delta": 0.0}, "delta"), ({"delta": 1.0}, "delta"),
                                     ({"delta": math.nan}, "delta"), ({"eps": -0.1}, "eps")])
def test_delta_and_eps_ranges(kw, name):
    with pytest.raises(ParameterError, match=name):
        all_bounds(GenericLDP(1.0), 100, **kw)


def test_n_and_exactly_one_target():
    with pytest.raises(ParameterError, match="n"):
        all_bounds(GenericLDP(1.0), 0, delta=1e-6)
    with pytest.raises(ParameterError, match="n"):
        all_bounds(GenericLDP(1.0), 10.5, delta=1e-6)
    with pytest.raises(ParameterError, match="delta"):
        best_upper_bound(GenericLDP(1.0), 100)


def test_vr_params_validated():
    with pytest.raises(ParameterError, match="p"):
        VRParams(1.0, 0.1, 2.0)
    with pytest.raises(ParameterError, match="beta"):
        VRParams(3.0, 0.9, 3.0)
    with pytest.raises(ParameterError, match="q"):
        VRParams(3.0, 0.5, 0.5)
    assert vr_delta(0.1, 100, VRParams(3.0, 0.0, 3.0)) == 0.0


def test_bound_record_validated():
    with pytest.raises(ParameterError, match="kind"):
        Bound("x", "middle", True, 0.1, 0.1)
    with pytest.raises(ParameterError, match="delta"):
        Bound("x", "upper", True, 0.1, 1.5)
