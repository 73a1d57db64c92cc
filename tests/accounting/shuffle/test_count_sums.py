"""Exact count sums for E[(ΣG)_+] (darrm.accounting.shuffle.count_sums) against brute force.

The reference enumerates every multinomial count vector of the atoms (independent
of the conditioning, windows, cells and closed forms used by the module).
"""

import math

import numpy as np
import pytest
from references.shuffle_exact import worst_case_delta
from scipy.special import gammaln

from darrm.accounting import FiniteRandomizer, RandomizedResponse
from darrm.accounting.shuffle import count_sums as CS
from darrm.accounting.shuffle import decomposition
from darrm.accounting.shuffle.decomposition import (
    blanket_atoms,
    dataset_atoms,
    mixture_atoms,
)


def brute_positive_part(vals, w, n):
    """E[(Σ_{i<=n} G_i)_+] by enumerating the multinomial counts of all atoms."""
    vals = np.asarray(vals, dtype=float)
    w = np.asarray(w, dtype=float) / np.sum(w)
    keep = w > 0
    vals, lw = vals[keep], np.log(w[keep])
    total = 0.0

    def rec(i, left, logp, acc):
        nonlocal total
        if i == len(vals) - 1:
            lp = logp + left * lw[i] - gammaln(left + 1)
            x = acc + vals[i] * left
            if x > 0:
                total += math.exp(lp + gammaln(n + 1)) * x
            return
        for c in range(left + 1):
            rec(i + 1, left - c, logp + c * lw[i] - gammaln(c + 1), acc + vals[i] * c)

    rec(0, n, 0.0, 0.0)
    return total


def _cases():
    out = []
    for k in (2, 3, 4, 10):
        m = RandomizedResponse(1.2, k).to_finite().array
        out.append(("blanket", k, blanket_atoms(m, 0, 1)))
        out.append(("x*=x1", k, dataset_atoms(m, 0, 1, 1)))
        out.append(("mixture", k, mixture_atoms(m, 0, 1)))
        if k >= 3:
            out.append(("x*=2", k, dataset_atoms(m, 0, 1, 2)))  # 4 atoms for k >= 4: coarsened
    return out


@pytest.mark.parametrize("name,k,atoms", _cases(), ids=lambda x: str(x) if not hasattr(x, "w") else "")
@pytest.mark.parametrize("n", [1, 5, 23])
def test_count_sum_sandwiches_multinomial_enumeration(name, k, atoms, n):
    for eps in (0.0, 0.08, 0.5, 1.0):
        v = atoms.values(eps)
        ex = brute_positive_part(v, atoms.w, n)
        up, exact_up = CS.expected_positive_part(v, atoms.w, n, "upper")
        lo, exact_lo = CS.expected_positive_part(v, atoms.w, n, "lower")
        assert lo <= ex * (1 + 1e-12) + 1e-300 and up >= ex * (1 - 1e-12), (name, k, n, eps, lo, ex, up)
        if exact_up and ex > 1e-200:
            # exact up to the error allowance (relatively largest in far tails at small n)
            assert up <= ex * (1 + 1e-3) + 1e-14
            assert lo >= ex * (1 - 1e-3) - 1e-14


def test_middle_atom_positive_and_merged_cells_are_still_bounds():
    # three atoms with two positive (reflected J) and a forced merging of cells
    v, w = np.array([2.0, 0.3, -1.5, 0.0]), np.array([0.1, 0.3, 0.2, 0.4])
    for n in (4, 15, 30):
        ex = brute_positive_part(v, w, n)
        for mc in (CS.MAX_CELLS, 3):
            up, _ = CS.expected_positive_part(v, w, n, "upper", max_cells=mc)
            lo, _ = CS.expected_positive_part(v, w, n, "lower", max_cells=mc)
            assert lo <= ex * (1 + 1e-12) and up >= ex * (1 - 1e-12), (n, mc, lo, ex, up)
        assert CS.expected_positive_part(v, w, n, "upper")[0] <= ex * (1 + 1e-6)


def test_coarsening_rounds_in_the_safe_direction():
    v, w = np.array([3.0, 1.0, 0.5, -0.2, -1.0, 0.0]), np.array([0.1, 0.1, 0.2, 0.2, 0.2, 0.2])
    for kind, sign in (("upper", 1), ("lower", -1)):
        cv, cw, exact = CS.coarsen(v, w, kind)
        assert not exact and len(cv) == 3 and cw.sum() == pytest.approx(0.8)
        ex = brute_positive_part(v, w, 12)
        got = brute_positive_part(np.append(cv, 0.0), np.append(cw, 0.2), 12)
        assert sign * (got - ex) >= -1e-15


def test_count_sums_match_fft_where_its_grid_is_exact():
    # small n: the FFT window covers the whole support with a fine grid
    m = RandomizedResponse(2.0, 5).to_finite().array
    at = blanket_atoms(m, 0, 1)
    for n, eps in ((60, 0.3), (200, 0.2)):
        v = at.values(eps)
        up_fft = decomposition.centred_positive_part(v, at.w, n, "upper", max_points=1 << 20)
        lo_fft = decomposition.centred_positive_part(v, at.w, n, "lower", max_points=1 << 20)
        cs = CS.expected_positive_part(v, at.w, n, "upper")[0]
        assert lo_fft <= cs <= up_fft * (1 + 1e-6)


@pytest.mark.parametrize("k,n,eps0", [(3, 12, 1.5), (4, 8, 1.0)])
def test_mixture_lower_bound_below_worst_case_exact(k, n, eps0):
    es = np.array([0.0, 0.1, 0.4])
    exact = worst_case_delta(RandomizedResponse(eps0, k), n, es).delta
    m = RandomizedResponse(eps0, k).to_finite().array
    at = mixture_atoms(m, 0, 1)
    for e, ex in zip(es, exact, strict=True):
        lo = CS.expected_positive_part(at.values(e), at.w, n, "lower")[0] / n
        assert lo <= ex + 1e-12


def test_finite_randomizer_count_sum_path_is_used_for_three_atom_gparv():
    # a non-RR 3x3 matrix with extreme-property ratios: blanket GPARV has <= 3 atoms
    e = math.exp(1.0)
    R = FiniteRandomizer.from_array(np.array([[e, 1, 1], [1, e, 1], [1, 1, e]]) / (e + 2))
    d, exact = decomposition._optimal(R, 10**6, 0.004)
    assert exact and d == decomposition.optimal_delta(RandomizedResponse(1.0, 3), 10**6, 0.004)
