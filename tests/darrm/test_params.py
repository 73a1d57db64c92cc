import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from darrm.errors import ParameterError
from darrm.numerics.delta import composed_delta
from darrm.params import PrivacyParams


def test_default_delta_is_m_fold_composition():
    P = PrivacyParams(11, 3, 0.1, 1e-5)
    assert P.delta == pytest.approx(1 - (1 - 1e-5) ** 3, rel=1e-12)
    assert PrivacyParams(11, 3, 0.1, 0.0).delta == 0.0
    assert P.rhs == pytest.approx(math.exp(0.3) - 1 + 2 * P.delta, rel=1e-15)
    assert composed_delta(1e-18, 5) == pytest.approx(5e-18, rel=1e-12)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(K=10, m=3, eps=0.1), "K"),
        (dict(K=0, m=1, eps=0.1), "K"),
        (dict(K=11.0, m=1, eps=0.1), "K"),
        (dict(K=True, m=1, eps=0.1), "K"),
        (dict(K=11, m=12, eps=0.1), "m"),
        (dict(K=11, m=0.5, eps=0.1), "m"),
        (dict(K=11, m=3, eps=0.0), "eps"),
        (dict(K=11, m=3, eps=-1.0), "eps"),
        (dict(K=11, m=3, eps=float("nan")), "eps"),
        (dict(K=11, m=3, eps=float("inf")), "eps"),
        (dict(K=11, m=3, eps=0.1, member_delta=1.0), "member_delta"),
        (dict(K=11, m=3, eps=0.1, member_delta=-1e-9), "member_delta"),
        (dict(K=11, m=3, eps=0.1, member_delta=1e-3, delta=1e-4), "delta"),
        (dict(K=11, m=3, eps=0.1, member_delta=0.0, delta=1.0), "delta"),
        (dict(K=11, m=3, eps=0.1, member_delta=0.0, delta=float("nan")), "delta"),
        (dict(K=11, m=3, eps="x"), "eps"),
        (dict(K=11, m=11, eps=100.0), "eps"),
    ],
)
def test_bad_parameters_raise_naming_the_parameter(kwargs, name):
    with pytest.raises(ParameterError) as exc:
        PrivacyParams(**kwargs)
    assert exc.value.parameter == name
    assert str(exc.value).startswith(name + ":")


@given(
    K=st.integers(1, 301).filter(lambda k: k % 2 == 1),
    mfrac=st.floats(0, 1),
    eps=st.floats(1e-6, 2),
    member_delta=st.floats(0, 0.5),
)
def test_valid_parameters_are_accepted_and_normalised(K, mfrac, eps, member_delta):
    m = 1 + mfrac * (K - 1)
    if composed_delta(member_delta, m) >= 1.0:
        with pytest.raises(ParameterError, match="delta"):
            PrivacyParams(np.int64(K), m, eps, member_delta)
        return
    P = PrivacyParams(np.int64(K), m, eps, member_delta)
    assert isinstance(P.K, int) and P.member_delta <= P.delta < 1 and P.rhs > 0
