"""best_upper_bound evaluates upper bounds only; the lower bound's datasets are deduplicated
by their GPARV without losing anything; the k-RR lower bound is the exact count divergence;
all_bounds reports a method that does not apply instead of dropping it."""

import math

import numpy as np
import pytest
from references import shuffle_exact as exact

from darrm.accounting import FiniteRandomizer, GenericLDP, RandomizedResponse, all_bounds, best_upper_bound
from darrm.accounting.shuffle import decomposition, joint, lower_datasets
from darrm.accounting.shuffle.bound import NotApplicable
from darrm.accounting.shuffle.variation_ratio import krr_count_lower_delta


def test_best_upper_bound_never_evaluates_a_lower_bound(monkeypatch):
    def boom(*_a, **_k):
        raise AssertionError("a lower bound was evaluated")

    monkeypatch.setattr(decomposition, "lower_delta", boom)
    import darrm.accounting.shuffle.krr as krr

    monkeypatch.setattr(krr, "lower_delta", boom)
    b = best_upper_bound(RandomizedResponse(1.0, 4), 2000, delta=1e-6)
    assert b.kind == "upper" and b.valid


def test_docs_joint_example_best_upper_bound_finishes():
    """The docs' joint of two 4-RR at n = 5000 (hung before: it evaluated the lower bound);
    it must be a valid upper bound no larger than the clone bound (CI's budget times it)."""
    r = joint(RandomizedResponse(0.5, 4).to_finite(), RandomizedResponse(0.5, 4).to_finite())
    b = best_upper_bound(r, 5000, delta=1e-6)
    clones = all_bounds(r, 5000, delta=1e-6, methods=["clones"])[0]
    assert b.kind == "upper" and b.valid and 0 < b.eps <= clones.eps


def _all_triples_lower(m: np.ndarray, n: int, eps: float) -> float:
    """Brute force: every (x0, x1, x*) dataset and the mixture, no deduplication."""
    k = m.shape[0]
    best = 0.0
    for a in range(k):
        for b in range(k):
            if a == b:
                continue
            ats = [decomposition.mixture_atoms(m, a, b)] + [decomposition.dataset_atoms(m, a, b, c) for c in range(k)]
            for at in ats:
                best = max(best, decomposition.positive_part(at.values(eps), at.w, n, "lower")[0] / n)
    return best


def test_deduplicated_datasets_lose_nothing_against_all_triples():
    r = FiniteRandomizer.from_array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.3, 0.2, 0.5], [0.4, 0.4, 0.2]])
    m = r.array
    ds = lower_datasets.distinct_datasets(m)
    assert len(ds) < 4 * 3 * 5  # some datasets share a GPARV (the cyclic symmetry of the first three rows)
    for eps in (0.05, 0.2):
        assert decomposition.lower_delta(r, 60, eps) == pytest.approx(_all_triples_lower(m, 60, eps), rel=1e-12)


def test_joint_of_two_krr_collapses_to_its_orbits():
    r = joint(RandomizedResponse(0.5, 4).to_finite(), RandomizedResponse(0.5, 4).to_finite())
    ds = lower_datasets.distinct_datasets(r.array)
    # per coordinate (x0_i, x1_i, x*_i): 5 equality patterns, 25 in all, minus the 4 with
    # x0 = x1 in both coordinates = 21 fillers' orbits; the two coordinates are exchangeable
    # (same 4-RR), leaving 14 fillers' orbits, plus the mixtures (which coincide with some)
    assert 14 <= len(ds) <= 14 + 3


def test_lower_bound_refuses_huge_enumerations_with_an_estimate():
    m = RandomizedResponse(1.0, 30).to_finite().array
    with pytest.raises(NotApplicable, match=r"randomizer: .*26,100 datasets.*2\.4e\+06 complex.*limit 1\.0e\+03"):
        lower_datasets.distinct_datasets(m, max_work=1000)
    # a joint of three 10-RR (1000 inputs and outputs) is refused at the default limit, at once
    with pytest.raises(NotApplicable, match="about 3000 s"):
        lower_datasets.distinct_datasets(np.ones((1000, 1000)) / 1000)


@pytest.mark.parametrize("k,eps0", [(3, 1.0), (4, 1.5), (5, 2.0)])
def test_krr_count_lower_bound_is_below_its_datasets_exact_divergence_and_equal_for_k3(k, eps0):
    """Data-processing: the counts (N_x0, N_x1) lose information when k >= 4; for k = 3 they
    determine the histogram, so the count divergence is the dataset pair's exact one (rounded down
    by its error charges, mostly scipy's assumed RHO = 1e-9 relative accuracy times the P- and
    Q-masses that cancel in δ: within 1e-7 of it)."""
    rr = RandomizedResponse(eps0, k)
    n = 14
    for eps in (0.1, 0.4, 0.8):
        ref = float(exact.dataset_delta(rr, 0, 1, [2] * (n - 1), eps)[0])
        low = krr_count_lower_delta(eps, n, eps0, k)
        if k == 3:
            assert ref * (1 - 1e-7) <= low <= ref * (1 + 1e-12)
        else:
            assert 0 < low <= ref * (1 + 1e-12)


def test_krr_lower_bound_equals_the_count_divergence_where_binding_and_is_below_the_truth():
    rr = RandomizedResponse(1.0, 4)
    n = 12
    eps = np.array([0.05, 0.15, 0.3, 0.5])
    truth = exact.worst_case_delta(rr, n, eps).delta
    binding = 0
    for e, t in zip(eps, truth, strict=True):
        low = decomposition.lower_delta(rr, n, float(e))
        count = krr_count_lower_delta(float(e), n, 1.0, 4)
        assert low >= count and low <= t * (1 + 1e-12)
        binding += low == count
    assert binding >= 1  # elsewhere the FFT of a dataset's full histogram is larger (it must be >= the counts')


def test_krr_lower_bound_is_not_zero_where_the_fft_was():
    """The binding 4-atom dataset (x* outside {x0, x1}) at n = 1000, ε = 0.2: δ ≈ 1e-12, not 0."""
    rr = RandomizedResponse(1.0, 4)
    d = decomposition.lower_delta(rr, 1000, 0.2)
    assert d == krr_count_lower_delta(0.2, 1000, 1.0, 4) and d > 1e-13


def test_a_method_asked_for_by_name_that_does_not_apply_is_reported_invalid():
    (b,) = all_bounds(GenericLDP(1.0), 1000, delta=1e-6, methods=["optimal-decomposition"])
    assert not b.valid and math.isinf(b.eps) and "specific randomizer" in b.note
    (b,) = all_bounds(RandomizedResponse(1.0, 3), 30_000, eps=0.1, methods=["krr-exact"])
    assert not b.valid and b.delta == 1.0 and "n <= 20000" in b.note
    assert all_bounds(RandomizedResponse(1.0, 3), 30_000, eps=0.1, methods=["krr-exact", "clones"])[0].valid
    # not asked for by name: left out by default, reported with include_invalid
    names = [b.method for b in all_bounds(GenericLDP(1.0), 1000, delta=1e-6)]
    assert "optimal-decomposition" not in names
    rec = {b.method: b for b in all_bounds(GenericLDP(1.0), 1000, delta=1e-6, include_invalid=True)}
    assert not rec["optimal-decomposition"].valid


def test_any_other_error_of_a_method_propagates(monkeypatch):
    import darrm.accounting.shuffle.best as best

    def broken(*_a, **_k):
        raise RuntimeError("bug")

    monkeypatch.setattr(best, "METHODS", [best.METHODS[0]._replace(eps_bound=broken)])
    with pytest.raises(RuntimeError, match="bug"):
        all_bounds(GenericLDP(1.0), 1000, delta=1e-6)


def test_each_method_name_is_its_modules():
    from darrm.accounting.shuffle import (
        METHODS,
        binary_rr_exact,
        blanket,
        clones,
        erlingsson,
        krr,
        variation_ratio,
    )

    names = {erlingsson.NAME, clones.NAME, variation_ratio.NAME, decomposition.NAME, decomposition.LOWER_NAME,
             krr.LOWER_NAME, binary_rr_exact.NAME, binary_rr_exact.LOWER_NAME, *blanket.NAMES.values()}
    assert [m.name for m in METHODS] and {m.name for m in METHODS} == names
