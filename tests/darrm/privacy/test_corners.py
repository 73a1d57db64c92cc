import math

import numpy as np
import pytest

from darrm.errors import ParameterError
from darrm.gamma import gamma_sub, symmetric_from_upper
from darrm.numerics.poisson_binomial import pmf
from darrm.privacy.certify import output_probability
from darrm.privacy.corners import (
    corners,
    count_vectors,
    expand,
    in_region,
    iter_count_vector_blocks,
    multiset_count,
)


@pytest.mark.parametrize("Delta,n", [(1e-5, 8), (0.1, 8), (0.0, 4)])
def test_corner_count_depends_on_Delta(Delta, n):
    c = corners(0.1, Delta)
    assert c.shape == (n, 2)
    assert np.all(in_region(c[:, 0], c[:, 1], 0.1, Delta))


@pytest.mark.parametrize("Delta", [0.0, 1e-3, 0.2])
def test_corner_set_closed_under_swap_and_reflection(Delta):
    c = {tuple(np.round(r, 15)) for r in corners(0.3, Delta)}
    assert {(b, a) for a, b in c} == c
    assert {tuple(np.round((1 - a, 1 - b), 15)) for a, b in c} == c


@pytest.mark.parametrize("Delta", [0.0, 0.05])
def test_corners_are_the_vertices_of_the_region(Delta):
    # every corner is a vertex: it satisfies at least two of the region's constraints with equality
    eps = 0.4
    e = math.exp(eps)
    for p, q in corners(eps, Delta):
        slacks = [e * q + Delta - p, e * p + Delta - q, e * (1 - q) + Delta - (1 - p), e * (1 - p) + Delta - (1 - q),
                  p, 1 - p, q, 1 - q]
        assert sum(abs(s) < 1e-12 for s in slacks) >= 2


def test_multiset_counts_match_paper():
    assert multiset_count(11, 8) == 31824
    assert multiset_count(11, 4) == 364
    assert multiset_count(41, 8) == 73629072
    assert multiset_count(101, 4) == 182104


def test_count_vectors_enumerate_each_multiset_once():
    cv = count_vectors(7, 5)
    assert cv.shape == (multiset_count(7, 5), 5)
    assert np.all(cv.sum(axis=1) == 7) and np.all(cv >= 0)
    assert len(np.unique(cv, axis=0)) == cv.shape[0]


def test_blocked_enumeration_covers_all_multisets_once():
    blocks = list(iter_count_vector_blocks(9, 6, block=50))
    allb = np.concatenate(blocks)
    assert max(b.shape[0] for b in blocks) <= 50
    assert allb.shape[0] == multiset_count(9, 6)
    assert len(np.unique(allb, axis=0)) == allb.shape[0]


def test_expand_repeats_corner_values():
    vals = np.array([10.0, 20.0, 30.0])
    out = expand(np.array([[2, 0, 1], [0, 3, 0]]), vals)
    np.testing.assert_array_equal(out, [[10, 10, 30], [20, 20, 20]])


def test_corners_reject_bad_parameters():
    with pytest.raises(ParameterError, match="eps"):
        corners(0.0, 0.1)
    with pytest.raises(ParameterError, match="Delta"):
        corners(0.1, 1.0)


def _max_violation_random_points(gamma, eps, Delta, m, delta, K, rng, n=40000):
    """Dense random search over ∏F (rejection sampling of each pair inside F plus points on
    its edges) of the output-1 privacy violation, in both directions."""
    e = math.exp(m * eps)
    cs = corners(eps, Delta)
    # random convex combinations of corners cover F (F is the convex hull of its vertices);
    # pulling them toward a random vertex (t = u^4 is often tiny) also samples F's boundary
    w = rng.dirichlet(np.full(len(cs), 0.5), size=(n, K))
    vertex = cs[rng.integers(0, len(cs), size=(n, K))]
    t = rng.uniform(size=(n, K, 1)) ** 4
    pts = (1 - t) * vertex + t * (w @ cs)  # (n, K, 2), inside F by convexity
    a, ap = pmf(pts[..., 0]), pmf(pts[..., 1])
    p1, pp1 = output_probability(a, gamma), output_probability(ap, gamma)
    return max(np.max(p1 - e * pp1 - delta), np.max((1 - p1) - e * (1 - pp1) - delta))


def _max_violation_corners(gamma, eps, Delta, m, delta, K):
    e = math.exp(m * eps)
    cs = corners(eps, Delta)
    cv = count_vectors(K, len(cs))
    a, ap = pmf(expand(cv, cs[:, 0])), pmf(expand(cv, cs[:, 1]))
    p1, pp1 = output_probability(a, gamma), output_probability(ap, gamma)
    return max(np.max(p1 - e * pp1 - delta), np.max((1 - p1) - e * (1 - pp1) - delta))


@pytest.mark.parametrize("K,Delta", [(3, 0.0), (3, 0.02), (5, 0.0), (5, 0.01)])
def test_no_point_of_the_region_beats_the_corner_multisets(K, Delta, rng):
    """Lemma 5.1 by brute force: a dense random search over ∏F never exceeds the corner maximum."""
    eps, m = 0.5, 1.0
    for gamma in (np.ones(K + 1), gamma_sub(K, 1), symmetric_from_upper(rng.uniform(size=(K + 1) // 2), K)):
        vc = _max_violation_corners(gamma, eps, Delta, m, Delta, K)
        vr = _max_violation_random_points(gamma, eps, Delta, m, Delta, K, rng)
        assert vr <= vc + 1e-12
        # and the search gets close, so the comparison is not vacuous
        assert vr >= vc - 0.1 * abs(vc) - 1e-2
