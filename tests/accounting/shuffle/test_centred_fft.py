"""The centred-rounding FFT (decomposition.centred_positive_part) and the adaptive grid of
positive_part: rigorous against brute force, and tight against a fine-grid reference."""

import numpy as np
import pytest

from darrm.accounting import RandomizedResponse
from darrm.accounting.shuffle import decomposition as D
from darrm.accounting.shuffle import joint

from .test_count_sums import brute_positive_part


def _joint_gparv():
    r = joint(RandomizedResponse(0.5, 4).to_finite(), RandomizedResponse(0.5, 4).to_finite())
    at = max(D._blanket_gparvs(r), key=lambda a: len(a.w))
    assert len(at.w) == 7  # the victim pair differing in both coordinates: 7 atoms
    return at


@pytest.mark.parametrize("n,eps,mp", [(10, 0.05, 1 << 6), (10, 0.3, 1 << 7), (14, 0.1, 1 << 8), (14, 0.0, 1 << 10)])
def test_centred_fft_brackets_the_brute_force_value(n, eps, mp):
    """Coarse grids (rounding error large) on a 7-atom GPARV: upper >= exact >= lower."""
    at = _joint_gparv()
    v = at.values(eps)
    ex = brute_positive_part(v, at.w, n)
    up = D.centred_positive_part(v, at.w, n, "upper", mp)
    lo = D.centred_positive_part(v, at.w, n, "lower", mp)
    assert lo <= ex * (1 + 1e-12) and ex <= up * (1 + 1e-12)
    assert up > lo  # not vacuous: the grid is coarse enough to leave a gap


def test_centred_fft_catches_a_dropped_hoeffding_term(monkeypatch):
    """Without the Hoeffding term the 'upper' bound falls below the exact value: the term is needed."""
    at = _joint_gparv()
    v = at.values(0.05)
    ex = brute_positive_part(v, at.w, 10)
    monkeypatch.setattr(D.math, "erfc", lambda x: 0.0)
    assert D.centred_positive_part(v, at.w, 10, "upper", 1 << 6) < ex


def grid_positive_part(vals, w, n: int, kind: str, max_points: int) -> float:
    """The reference: E[(Σ_{i<=n} G_i)_+] with atoms rounded *up* (upper) or *down* (lower) to a
    fine grid (the rounded sum dominates, or is dominated by, the true one pointwise), by the
    lattice FFT of :func:`~darrm.accounting.shuffle.decomposition.lattice_positive_part`."""
    vals, w = D._normalised(vals, w)
    step = D._window(vals, w, n, max_points)
    j = np.ceil(vals / step) if kind == "upper" else np.floor(vals / step)
    return step * float(D.lattice_positive_part(j.astype(np.int64), w, n, [0.0], kind, max_points)[0])


def test_seven_atom_joint_bound_agrees_with_a_fine_grid_reference_to_one_percent():
    """n = 300: the adaptive bounds (default levels) against the independent rounded-up /
    rounded-down FFT on a 2^22 grid, a rigorous bracket [ref_lo, ref_up] of the true value
    resolved to 1 %: both adaptive bounds lie within 1 % of that bracket, on the valid side."""
    at = _joint_gparv()
    n, eps = 300, 0.05
    v = at.values(eps)
    ref_up = grid_positive_part(v, at.w, n, "upper", max_points=1 << 22)
    ref_lo = grid_positive_part(v, at.w, n, "lower", max_points=1 << 22)
    assert ref_up <= 1.0101 * ref_lo
    up, exact = D.positive_part(v, at.w, n, "upper")
    lo, _ = D.positive_part(v, at.w, n, "lower")
    assert not exact
    assert ref_lo <= up <= 1.01 * ref_up
    assert ref_lo / 1.01 <= lo <= ref_up
