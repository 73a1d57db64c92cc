import numpy as np
import pytest

from darrm import SolveOptions
from darrm.backends.executors import (
    DaskExecutor,
    ProcessExecutor,
    SerialExecutor,
    make_executor,
)
from darrm.errors import ParameterError
from darrm.gamma import gamma_sub, symmetric_from_upper
from darrm.params import PrivacyParams
from darrm.privacy.certify import certify, certify_reference
from darrm.privacy.sweep import build_tables, sweep


@pytest.mark.parametrize(
    "K,Delta", [(1, 0.0), (3, 0.01), (5, 0.0), (7, 1e-3), (9, 1e-5), (13, 0.02), (15, 0.0), (33, 0.0)]
)
def test_factorised_sweep_equals_direct_certificate(K, Delta, rng):
    """The C(K+5,5) table + gather gives the same largest violation as the direct
    per-multiset Poisson-binomial computation, to float64 rounding."""
    P = PrivacyParams(K, min(2, K), 0.3, Delta)
    for _ in range(3):
        g = symmetric_from_upper(rng.uniform(size=(K + 1) // 2), K)
        fast, ref = certify(g, P), certify_reference(g, P)
        assert fast.violation == pytest.approx(ref.violation, abs=1e-14)
        assert fast.checked == ref.checked


def test_sweep_top_violators_are_exact_and_sorted(rng):
    P = PrivacyParams(9, 2, 0.2, 1e-3)
    g = np.ones(10)
    res = sweep(g, P, top=20, threshold=0.0, diverse=False)
    assert res.candidates.shape == (20, 8)
    assert np.all(np.diff(res.violations) <= 0)
    assert res.violations[0] == pytest.approx(res.max_violation)
    # each candidate's violation recomputed directly
    from darrm.privacy.certify import certify_reference_counts
    from darrm.privacy.corners import corners

    for cnt, v in zip(res.candidates[:5], res.violations[:5], strict=True):
        vd, _, _ = certify_reference_counts(g, P, cnt[None], corners(P.eps, P.member_delta))
        assert vd == pytest.approx(v, abs=1e-14)


def test_tables_memory_is_polynomial_of_degree_four():
    """U holds, per triple (s, a, b), only the K − (s+a+b) + 1 columns its (c, d) pairs can use:
    C(K+4, 4) floats (the old dense V had C(K+2,2)·C(K+3,3))."""
    import math

    P = PrivacyParams(21, 3, 0.1, 1e-5)
    T = build_tables(gamma_sub(21, 3), P)
    assert T.floats == math.comb(25, 4)


@pytest.mark.parametrize("K,Delta", [(5, 0.01), (9, 1e-3), (11, 0.05)])
def test_reduced_sweep_equals_brute_force_bit_for_bit(K, Delta, rng):
    """The running-extreme reduction over n_2 (sweep_R) returns exactly the largest per-multiset
    v̂ of pair_violation evaluated on the same table values at every one of the C(K+7,7)
    multisets, and each reported candidate is a real multiset with that exact value."""
    import math

    from darrm.privacy import approx_blocks as blocks
    from darrm.privacy import sweep as sw
    from darrm.privacy.condition import pair_violation
    from darrm.privacy.corners import count_vectors

    P = PrivacyParams(K, 2, 0.4, Delta)
    g = symmetric_from_upper(rng.uniform(size=(K + 1) // 2), K)
    T = build_tables(g, P)
    # V(s, a, b, c, d) from the same tables, by brute force over its definition
    V = {}
    for R in range(K + 1):
        cd = K - R
        UR = np.concatenate([u[:, : cd + 1] for u in T.U[: R + 1]])
        cells = blocks._triple_cells(R)
        S = R + 1
        c_all = np.arange(cd + 1)
        VR = T.H[T.lut[c_all, cd - c_all]][:, : cd + 1] @ UR.T  # the product sweep_R forms
        for c in range(cd + 1):
            for cell, v in zip(cells.tolist(), VR[c].tolist(), strict=True):
                V[(cell // (S * S), (cell // S) % S, cell % S, c, cd - c)] = v
    allc = count_vectors(K, 8)
    pa = np.array([V[(n[1] + n[5], n[3], n[4], n[6], n[7])] for n in allc])
    pb = np.array([V[(n[1] + n[4], n[2], n[5], n[7], n[6])] for n in allc])
    brute = pair_violation(pa, pb, P.check)
    res = sw.sweep(g, P, top=math.comb(K + 7, 7), threshold=-np.inf)
    assert res.max_violation == brute.max()
    assert res.checked == allc.shape[0]
    lookup = {tuple(n): v for n, v in zip(allc.tolist(), brute.tolist(), strict=True)}
    for cnt, v in zip(res.candidates, res.violations, strict=True):
        assert cnt.sum() == K and lookup[tuple(int(x) for x in cnt)] == v


def test_process_executor_gives_the_serial_answer():
    P = PrivacyParams(15, 3, 0.1, 1e-5)
    g = gamma_sub(15, 3) * 1.2
    g = np.minimum(g, 1.0)
    a = sweep(g, P, top=10, threshold=-1.0, executor=SerialExecutor())
    b = sweep(g, P, top=10, threshold=-1.0, executor=ProcessExecutor(2))
    assert a.max_violation == b.max_violation and a.checked == b.checked
    np.testing.assert_allclose(np.sort(a.violations), np.sort(b.violations), atol=0)


def test_dask_local_cluster_gives_the_serial_answer():
    distributed = pytest.importorskip("distributed")
    P = PrivacyParams(13, 3, 0.1, 1e-5)
    g = np.minimum(gamma_sub(13, 3) * 1.2, 1.0)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl:
        with distributed.Client(cl) as client:
            b = sweep(g, P, executor=DaskExecutor(client))
    a = sweep(g, P)
    assert a.max_violation == b.max_violation and a.checked == b.checked


def test_make_executor_parses_specs():
    assert isinstance(make_executor("serial"), SerialExecutor)
    assert make_executor("local:3").workers == 3
    with pytest.raises(ParameterError, match="executor"):
        make_executor("cloud:9")
    with pytest.raises(ParameterError, match="executor"):
        make_executor("dask")


@pytest.mark.parametrize("K,Delta", [(11, 1e-5), (17, 0.0), (19, 1e-4)])
def test_torch_backend_matches_numpy_to_1e12(K, Delta):
    pytest.importorskip("torch")
    from darrm.backends.devices import TorchDevice

    P = PrivacyParams(K, 3, 0.1, Delta)
    g = np.minimum(1.15 * gamma_sub(K, 3), 1.0)
    a = sweep(g, P, top=25, threshold=-1.0)
    b = sweep(g, P, top=25, threshold=-1.0, executor=TorchDevice("cpu"))
    assert abs(a.max_violation - b.max_violation) <= 1e-12 and a.checked == b.checked
    np.testing.assert_allclose(np.sort(a.violations), np.sort(b.violations), atol=1e-12)


def test_solve_on_the_torch_backend_gives_the_same_table():
    pytest.importorskip("torch")
    from darrm.backends.devices import TorchDevice
    from darrm.solver.gamma_opt import solve_gamma_opt

    P = PrivacyParams(13, 3, 0.1, 1e-5)
    a = solve_gamma_opt(P, options=SolveOptions(method="cutting-planes"))
    b = solve_gamma_opt(P, executor=TorchDevice("cpu"), options=SolveOptions(method="cutting-planes"))
    assert b.objective == pytest.approx(a.objective, abs=1e-12)


def test_the_torch_backend_raises_no_warning_about_read_only_arrays():
    """Issue 23: cached read-only index and pmf arrays were handed to torch.from_numpy as views.
    torch warns once per process, so a fresh one runs the sweep with warnings as errors."""
    pytest.importorskip("torch")
    import subprocess
    import sys

    code = ("import numpy as np\n"
            "from darrm import PrivacyParams, gamma_sub\n"
            "from darrm.backends.devices import TorchDevice\n"
            "from darrm.privacy.sweep import sweep\n"
            "g = np.minimum(1.15 * gamma_sub(11, 3), 1.0)\n"
            "print(sweep(g, PrivacyParams(11, 3, 0.1, 1e-5), top=5, threshold=-1.0,"
            " executor=TorchDevice('cpu')).max_violation)\n")
    r = subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", code], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "UserWarning" not in r.stderr, r.stderr[-2000:]


def test_diverse_cuts_come_from_distinct_blocks_and_keep_the_maximum():
    P = PrivacyParams(11, 2, 0.2, 1e-3)
    g = np.ones(12)
    full = sweep(g, P, top=30, threshold=0.0, diverse=False)
    div = sweep(g, P, top=30, threshold=0.0, diverse=True)
    assert div.max_violation == full.max_violation and div.violations[0] == full.violations[0]
    blocks = {(int(c[6]), int(c[7])) for c in div.candidates}
    assert len(blocks) == div.candidates.shape[0]  # one per (n_(hi,lo), n_(lo,hi)) block


def test_pure_chained_products_equal_the_plain_products_where_read(rng, monkeypatch):
    """Δ = 0: the chained triangular products of pure_block equal the plain products
    Σ_j Bin(d, lo)_j·X_hi[c, s+j] and Σ_i Bin(d, hi)_i·X_lo[c, s+i] on every entry the sweep
    reads (s ≤ K − c − d), for several link lengths (1: the pure recurrence; ≥ K: one link)."""
    import darrm.privacy.pure_blocks as sw
    from darrm.privacy.sweep_tables import build_pure_tables

    K = 41
    P = PrivacyParams(K, 3, 0.2, 0.0)
    g = symmetric_from_upper(rng.uniform(size=(K + 1) // 2), K)
    t = build_pure_tables(g, P)
    for links in (1, 2, 5, 16, 64):
        monkeypatch.setattr(sw, "PURE_CHAIN", links)
        for c in range(K + 1):
            n, D = K - c + 1, min(c, K - c) + 1
            pa, pb = sw.pure_block(t, c)
            for d in range(D):
                ra = np.array([t.Blo[d, : d + 1] @ t.Xhi[c, s : s + d + 1] for s in range(n - d)])
                rb = np.array([t.Bhi[d, : d + 1] @ t.Xlo[c, s : s + d + 1] for s in range(n - d)])
                np.testing.assert_allclose(pa[d, : n - d], ra, rtol=1e-13, atol=0)
                np.testing.assert_allclose(pb[d, : n - d], rb, rtol=1e-13, atol=0)


def test_pure_dp_diverse_cuts_come_from_distinct_blocks():
    P = PrivacyParams(21, 2, 0.2, 0.0)
    g = np.ones(22)
    full = sweep(g, P, top=25, threshold=0.0, diverse=False)
    div = sweep(g, P, top=25, threshold=0.0, diverse=True)
    assert div.max_violation == full.max_violation
    blocks = {(int(c[2]), int(c[3])) for c in div.candidates}
    assert len(blocks) == div.candidates.shape[0]  # one per (n_(hi,lo), n_(lo,hi)) pair


def test_chunked_sweep_gives_the_unchunked_answer(rng, monkeypatch):
    """Gathering the n_4-slices separately or merged changes neither the maximum nor the
    per-block candidates."""
    import darrm.privacy.approx_blocks as blocks
    import darrm.privacy.sweep as sw

    P = PrivacyParams(13, 2, 0.2, 1e-3)
    g = symmetric_from_upper(rng.uniform(size=7), 13)
    whole = sw.sweep(g, P, top=40, threshold=-1.0)
    monkeypatch.setattr(blocks, "MIN_GATHER", 50)
    assert len(blocks._gather_groups(13, *blocks._tetrahedron(13)[1:])) < 14  # really merged
    monkeypatch.setattr(blocks, "MIN_GATHER", 1)
    assert len(blocks._gather_groups(13, *blocks._tetrahedron(13)[1:])) == 14  # one gather per n_4
    chunked = sw.sweep(g, P, top=40, threshold=-1.0)
    assert chunked.max_violation == whole.max_violation and chunked.checked == whole.checked
    np.testing.assert_array_equal(np.sort(chunked.violations), np.sort(whole.violations))


def test_torch_backend_streams_the_same_chunks(rng, monkeypatch):
    pytest.importorskip("torch")
    import darrm.privacy.approx_blocks as blocks
    import darrm.privacy.sweep as sw
    from darrm.backends.devices import TorchDevice

    P = PrivacyParams(11, 2, 0.2, 1e-3)
    g = symmetric_from_upper(rng.uniform(size=6), 11)
    monkeypatch.setattr(blocks, "MIN_GATHER", 40)
    a = sw.sweep(g, P, top=30, threshold=-1.0)
    b = sw.sweep(g, P, top=30, threshold=-1.0, executor=TorchDevice("cpu"))
    assert abs(a.max_violation - b.max_violation) <= 1e-12 and a.checked == b.checked
    np.testing.assert_allclose(np.sort(a.violations), np.sort(b.violations), atol=1e-12)
