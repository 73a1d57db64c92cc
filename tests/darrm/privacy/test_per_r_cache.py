"""The per-R index cache and the nested one-thread BLAS context (issue 27, cheaper screening
rounds): neither may change a sweep's answer, and each must do what it claims."""

import numpy as np
import pytest

from darrm.gamma import symmetric_from_upper
from darrm.params import PrivacyParams
from darrm.privacy import per_r_cache
from darrm.privacy.approx_blocks import _layout_cells, _tetrahedron
from darrm.privacy.block_maxima import collapse_cells
from darrm.privacy.sweep import sweep
from darrm.privacy.sweep_tables import _triple_cells


def _sweeps(g, P):
    """An exhaustive pruned sweep, a screening pass twice (the second reads the cache) and an
    unpruned screen: (maximum, checked, candidates, violations) of each."""
    blocks = {(c, d) for c in range(P.K + 1) for d in range(c + 1) if c + d <= P.K and (c + 2 * d) % 3 == 0}
    out = []
    for kw in ({}, {"blocks": blocks}, {"blocks": blocks}, {"blocks": blocks, "prune": False}):
        r = sweep(g, P, top=64, threshold=-1e-3, progress=False, **kw)
        out.append((r.max_violation, r.checked, r.candidates.tolist(), r.violations.tolist()))
    return out


@pytest.mark.parametrize("cap", [0, 1 << 14])
def test_sweeps_are_bit_for_bit_the_same_with_any_cache_cap(monkeypatch, cap):
    """No cache (0), a cache that fills after a few R (16 KiB) and the default give the same
    maxima, coverage, candidates and violations, exhaustive and screening, pruned or not."""
    P = PrivacyParams(23, 3, 0.2, 1e-4)
    g = symmetric_from_upper(np.random.default_rng(7).uniform(0.3, 1.0, size=12), 23)
    per_r_cache.clear()
    reference = _sweeps(g, P)
    monkeypatch.setattr(per_r_cache, "MAX_BYTES", cap)
    per_r_cache.clear()
    assert _sweeps(g, P) == reference
    assert per_r_cache.used_bytes() <= cap
    per_r_cache.clear()


def test_the_cache_keeps_read_only_arrays_until_full_then_admits_none(monkeypatch):
    per_r_cache.clear()
    size = 80 * 220  # ~ the five arrays of R = 9 (C(12, 3) = 220 triples)
    monkeypatch.setattr(per_r_cache, "MAX_BYTES", size)
    first = _tetrahedron(9)
    assert _tetrahedron(9) is first and all(not a.flags.writeable for a in first)
    used = per_r_cache.used_bytes()
    assert 0 < used <= size
    big = _tetrahedron(30)  # does not fit: computed, not kept
    assert _tetrahedron(30) is not big and per_r_cache.used_bytes() == used
    assert np.array_equal(_tetrahedron(30)[0], big[0])
    for f in (_layout_cells, _triple_cells, collapse_cells):  # every cached function hands out read-only arrays
        v = f(5)
        assert all(not a.flags.writeable for a in (v if isinstance(v, tuple) else (v,)))
    per_r_cache.clear()
    assert per_r_cache.used_bytes() == 0


def test_one_blas_thread_limits_once_and_restores_after_the_outermost(monkeypatch):
    """Nested contexts call threadpoolctl once (the outermost), BLAS stays at one thread inside,
    and the original limit comes back after the outermost exits."""
    import threadpoolctl

    from darrm.backends.executors import one_blas_thread

    calls = []
    real = threadpoolctl.threadpool_limits

    def counting(*a, **k):
        calls.append(k)
        return real(*a, **k)

    monkeypatch.setattr(threadpoolctl, "threadpool_limits", counting)

    def blas_threads():
        return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]

    before = blas_threads()
    with one_blas_thread():
        with one_blas_thread():
            with one_blas_thread():
                assert set(blas_threads()) <= {1}
        assert set(blas_threads()) <= {1}
    assert len(calls) == 1 and blas_threads() == before
