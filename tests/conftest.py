import numpy as np
import pytest

from darrm.params import PrivacyParams


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def paper_params():
    """Figure 2 of the paper: K=11, ε=0.1, Δ=1e-5, δ = 1-(1-Δ)^m."""

    def make(m, Delta=1e-5, delta=None):
        return PrivacyParams(K=11, m=m, eps=0.1, Delta=Delta, delta=delta)

    return make
