"""darrm.numerics.inversion: the one monotone inversion returns the requested (safe) end."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from darrm.errors import ParameterError
from darrm.numerics.inversion import inverse_monotone


@pytest.mark.parametrize("method", ["brent", "bisect"])
@given(root=st.floats(0.01, 9.9))
def test_decreasing_func_certified_and_uncertified_ends(method, root):
    f = lambda x: math.exp(-(x - root))  # noqa: E731  f(root) = 1, decreasing
    up = inverse_monotone(f, 1.0, 0.0, 10.0, increasing=False, method=method, xtol=1e-12, rtol=1e-12)
    lo = inverse_monotone(f, 1.0, 0.0, 10.0, increasing=False, side="uncertified", method=method,
                          xtol=1e-12, rtol=1e-12)
    assert f(up) <= 1.0 < f(lo)
    assert lo - 1e-12 <= root <= up + 1e-12 and up - lo <= 1e-9


@given(root=st.floats(0.01, 9.9))
def test_increasing_func_with_log_value_and_geometric_search(root):
    f = lambda x: (x / root) ** 3 * 1e-8  # noqa: E731  f(root) = 1e-8
    x = inverse_monotone(f, 1e-8, 1e-3, 10.0, increasing=True, geometric=True, log_value=True, rtol=1e-12)
    assert f(x) <= 1e-8 and x == pytest.approx(root, rel=1e-9)


def test_whole_interval_certified_returns_the_uncertified_end():
    assert inverse_monotone(lambda x: 0.0, 1.0, 0.0, 5.0, increasing=False) == 0.0
    assert inverse_monotone(lambda x: 0.0, 1.0, 0.0, 5.0, increasing=False, side="uncertified") == 0.0


def test_unreachable_target_names_the_parameter():
    with pytest.raises(ParameterError, match="delta"):
        inverse_monotone(lambda x: 1.0, 0.5, 0.0, 5.0, increasing=False, name="delta")


@pytest.mark.parametrize("start", [1e-3, 1.0, 1e3])
def test_expansion_finds_a_bracket_from_any_start(start):
    f = lambda s: 10.0 / s  # noqa: E731  ε(σ): decreasing
    s = inverse_monotone(f, 0.5, start, start, increasing=False, geometric=True, expand=2.0,
                         limits=(1e-6, 1e7), rtol=1e-12)
    assert f(s) <= 0.5 and s == pytest.approx(20.0, rel=1e-9)
    with pytest.raises(ParameterError, match="sigma"):
        inverse_monotone(f, 1e-9, start, start, increasing=False, geometric=True, expand=2.0,
                         limits=(1e-6, 1e7), name="sigma")


def test_expansion_stops_at_the_limit_of_the_uncertified_end():
    x = inverse_monotone(lambda e: e, 100.0, 1.0, 1.0, increasing=True, geometric=True, expand=2.0,
                         limits=(1e-9, 50.0), method="bisect")
    assert x == 50.0


def test_fixed_number_of_halvings_without_end_checks():
    # Wang et al. Algorithm 1: T halvings of [0, h], even when f(0) is already certified
    x = inverse_monotone(lambda e: 0.0, 1.0, 0.0, 1.0, increasing=False, method="bisect", xtol=0.0, rtol=0.0,
                         maxiter=30, check_ends=False)
    assert x == 2.0**-30


def test_non_monotone_noise_is_checked_not_assumed():
    f = lambda x: 1.0 - x + (1e-7 if 0.5 <= x < 0.5 + 1e-6 else 0.0)  # noqa: E731
    x = inverse_monotone(f, 0.5, 0.0, 1.0, increasing=False, rtol=1e-12)
    assert f(x) <= 0.5
