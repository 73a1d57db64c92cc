"""The executor seam: recipes instead of tables, the same verdict on every executor, and no
verdict from an incomplete sweep (lost workers are retried or end in a clean error)."""

import functools
import os
import pickle
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pytest

from darrm.backends.adapters import FuturesExecutor, JoblibExecutor
from darrm.backends.executors import ProcessExecutor, SerialExecutor, make_executor
from darrm.errors import ParameterError, WorkerLostError
from darrm.gamma import symmetric_from_upper
from darrm.params import PrivacyParams
from darrm.privacy import sweep as sweep_module
from darrm.privacy import sweep_recipe
from darrm.privacy.certify import certify
from darrm.privacy.sweep import run_block, sweep
from darrm.privacy.sweep_recipe import SweepRecipe, run_blocks

DP = PrivacyParams(13, 2, 0.3, 1e-3)
PURE = PrivacyParams(21, 3, 0.2)


def _table(P: PrivacyParams, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return symmetric_from_upper(rng.uniform(size=(P.K + 1) // 2), P.K)


def _same(a, b) -> None:
    """Two sweep results agree bit for bit: maximum, candidates, their violations, coverage."""
    assert a.max_violation == b.max_violation
    assert a.checked == b.checked
    np.testing.assert_array_equal(a.violations, b.violations)
    np.testing.assert_array_equal(a.candidates, b.candidates)


def test_recipe_is_a_few_kilobytes_and_keyed_by_content():
    P = PrivacyParams(101, 5, 0.1, 1e-5)
    g = _table(P, 0)
    r = SweepRecipe(g, P)
    assert len(pickle.dumps(r)) < 4096  # the tables at K = 101 are C(105, 4)·8 B ≈ 37 MB
    assert SweepRecipe(g.copy(), P).checksum == r.checksum
    g2 = g.copy()
    g2[60] = np.nextafter(g2[60], 0.0)  # one ulp of one entry
    assert SweepRecipe(g2, P).checksum != r.checksum
    assert SweepRecipe(g, PrivacyParams(101, 5, 0.1, 2e-5)).checksum != r.checksum
    assert SweepRecipe(g, PrivacyParams(101, 5, 0.2, 1e-5)).checksum != r.checksum


def test_worker_builds_the_tables_once_per_table(monkeypatch):
    calls = []
    real = sweep_module.build_for
    monkeypatch.setattr(sweep_module, "build_for", lambda r: calls.append(r.checksum) or real(r))
    sweep_recipe.clear_cache()
    r = SweepRecipe(_table(DP, 1), DP)
    for R in range(DP.K + 1):
        run_block(r, R)
    assert calls == [r.checksum]
    r2 = SweepRecipe(_table(DP, 2), DP)
    run_block(r2, 3)
    assert calls == [r.checksum, r2.checksum]
    sweep_recipe.clear_cache()


@pytest.mark.parametrize("P", [DP, PURE], ids=["delta", "pure"])
def test_joblib_loky_gives_the_serial_sweep_bit_for_bit(P):
    g = _table(P, 3)
    serial = sweep(g, P, top=5, threshold=-1.0, executor=SerialExecutor())
    _same(sweep(g, P, top=5, threshold=-1.0, executor=JoblibExecutor(2)), serial)


def test_a_concurrent_futures_pool_gives_the_serial_certificate():
    g = _table(DP, 4)
    with ProcessPoolExecutor(2) as pool:
        on_pool = certify(g, DP, executor=pool)  # a bare concurrent.futures.Executor
        via_adapter = certify(g, DP, executor=FuturesExecutor(pool))
    serial = certify(g, DP, executor=SerialExecutor())
    assert on_pool == serial == via_adapter


@pytest.fixture(scope="module")
def dask_client():
    """A local Dask cluster on 127.0.0.1: two worker processes (with nannies, which restart a
    killed worker), so the workers build the tables from the recipe (no cache shared with this
    process).  The client is the default one, so joblib's ``dask`` backend uses it too."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cl, distributed.Client(cl) as client:
        yield client


def _tight_table() -> tuple[PrivacyParams, np.ndarray]:
    """γ_Sub at m = 1 scaled until certified: its largest violation within 1e-9 of 0."""
    from darrm.gamma import gamma_sub
    from darrm.privacy.certify import certify_tight

    P = PrivacyParams(21, 1, 0.3, 1e-4)
    g, cert, _ = certify_tight(gamma_sub(P.K, 1), P, executor=SerialExecutor())
    assert cert.certified and cert.violation > -1e-9
    return P, g


def test_dask_local_cluster_gives_the_exhaustive_verdict_and_load(dask_client, tmp_path):
    from darrm import api, gamma_file
    from darrm.backends.executors import DaskExecutor
    from darrm.gamma import gamma_sub
    from darrm.privacy.certify import certify_tight
    from darrm.table import GammaTable

    client = dask_client
    g = _table(DP, 5)
    serial = certify(g, DP, executor=SerialExecutor())
    assert certify(g, DP, executor=DaskExecutor(client)) == serial
    assert certify(g, DP, executor=client.get_executor()) == serial
    # a tight table: the cluster's (pruned) sweep against the exhaustive serial one, bit for bit
    P, t = _tight_table()
    exhaustive = sweep(t, P, top=5, threshold=-1e-3, prune=False, executor=SerialExecutor())
    _same(sweep(t, P, top=5, threshold=-1e-3, executor=DaskExecutor(client)), exhaustive)
    # a certified table saved, then loaded with its certificate re-run on the cluster
    h, cert, _ = certify_tight(gamma_sub(DP.K, DP.m), DP)
    assert cert.certified
    table = GammaTable(params=DP, gamma=h, family="sub", violation=cert.violation, prior=None,
                       objective=None, solver="closed form", status=None, info={})
    path = tmp_path / "g.json"
    gamma_file.save(table, path)
    api._cache.clear()
    loaded = gamma_file.load(path, executor=DaskExecutor(client))
    assert loaded.violation == cert.violation


@pytest.mark.parametrize("P", [DP, PURE], ids=["delta", "pure"])
def test_joblib_dask_backend_gives_the_exhaustive_sweep_bit_for_bit(dask_client, P, monkeypatch):
    import joblib

    g = _table(P, 9)
    exhaustive = sweep(g, P, top=5, threshold=-1.0, prune=False, executor=SerialExecutor())
    here = []  # tables built in this process: none, if the blocks really ran on the cluster
    real = sweep_module.build_for
    monkeypatch.setattr(sweep_module, "build_for", lambda r: here.append(r) or real(r))
    sweep_recipe.clear_cache()
    with joblib.parallel_config(backend="dask"):
        _same(sweep(g, P, top=5, threshold=-1.0, executor=JoblibExecutor()), exhaustive)
    assert here == []


def _kill_then(fn, marker: str, victim, always: bool, shared, item):
    """Kill this worker process (no clean-up, as a crash or an OOM kill) when it gets ``victim``:
    once (a marker file remembers it), or every time."""
    if item == victim and (always or not os.path.exists(marker)):
        with open(marker, "w"):
            pass
        os._exit(1)
    return fn(shared, item)


class _Killing:
    """An executor whose workers die on one block (the sweep's own run_blocks must notice)."""

    def __init__(self, inner, marker, victim, always=False):
        self.inner, self.marker, self.victim, self.always = inner, str(marker), victim, always

    def run(self, fn, shared, items):
        return self.inner.run(functools.partial(_kill_then, fn, self.marker, self.victim, self.always), shared, items)


@pytest.mark.parametrize("inner", [lambda: ProcessExecutor(2), lambda: JoblibExecutor(2)], ids=["fork", "loky"])
def test_a_worker_killed_mid_sweep_is_retried_with_the_same_verdict(inner, tmp_path):
    g = _table(DP, 6)
    serial = sweep(g, DP, top=3, threshold=-1.0, executor=SerialExecutor())
    marker = tmp_path / "killed"
    res = sweep(g, DP, top=3, threshold=-1.0, executor=_Killing(inner(), marker, victim=DP.K))
    assert marker.exists()  # a worker really died
    _same(res, serial)


def test_a_dask_worker_killed_mid_sweep_leaves_the_verdict_unchanged(dask_client, tmp_path):
    """Dask reschedules the lost task on a surviving worker (and the nanny restarts the dead one)."""
    from darrm.backends.executors import DaskExecutor

    g = _table(DP, 10)
    serial = sweep(g, DP, top=3, threshold=-1.0, prune=False, executor=SerialExecutor())
    marker = tmp_path / "killed"
    res = sweep(g, DP, top=3, threshold=-1.0, executor=_Killing(DaskExecutor(dask_client), marker, victim=DP.K))
    assert marker.exists()  # a worker really died
    _same(res, serial)


def test_a_worker_that_always_dies_ends_in_a_clean_error_not_a_verdict(tmp_path):
    g = _table(DP, 7)
    with pytest.raises(WorkerLostError, match=r"lost \d+ of 14 block\(s\) even after 2 retries"):
        sweep(g, DP, executor=_Killing(JoblibExecutor(2), tmp_path / "k", victim=5, always=True))


class _Dropping:
    """A faulty executor that silently returns without one block's result."""

    def __init__(self, victim):
        self.victim = victim

    def run(self, fn, shared, items):
        for it in items:
            if it != self.victim:
                yield fn(shared, it)


def test_an_executor_that_drops_a_block_gives_no_verdict():
    r = SweepRecipe(_table(DP, 8), DP)
    with pytest.raises(WorkerLostError, match="returned without them"):
        run_blocks(_Dropping(4), r, list(range(DP.K + 1)), run_block)
    # each block counted once even when an executor returns one twice (a retried straggler)
    twice = type("Twice", (), {"run": lambda self, fn, s, items: [fn(s, it) for it in list(items) * 2]})()
    assert len(run_blocks(twice, r, list(range(DP.K + 1)), run_block)) == DP.K + 1


def test_make_executor_parses_joblib_specs():
    assert make_executor("joblib").n_jobs == -1
    assert make_executor("joblib:3").n_jobs == 3
    for bad in ("joblib:0", "joblib:x"):
        with pytest.raises(ParameterError, match="executor: joblib:N"):
            make_executor(bad)


class _ForgettingDask:
    """Dask under load: the scheduler forgets the tasks of a dead worker and their futures end in
    ``FutureCancelledError`` ("already forgotten") after some blocks were delivered."""

    def __init__(self, after):
        self.after, self.calls = after, 0

    def run(self, fn, shared, items):
        from distributed.client import FutureCancelledError

        self.calls += 1
        for i, it in enumerate(items):
            if self.calls == 1 and i == self.after:
                raise FutureCancelledError(key="block", reason="already forgotten")
            yield fn(shared, it)


def test_futures_forgotten_with_a_dead_dask_worker_are_run_again_with_the_same_result():
    pytest.importorskip("distributed")
    r = SweepRecipe(_table(DP, 9), DP)
    items = list(range(DP.K + 1))
    ex = _ForgettingDask(after=5)
    assert len(run_blocks(ex, r, items, run_block)) == len(items)
    assert ex.calls == 2
    serial = sweep(_table(DP, 9), DP, top=3, threshold=-1.0, executor=SerialExecutor())
    _same(sweep(_table(DP, 9), DP, top=3, threshold=-1.0, executor=_ForgettingDask(after=3)), serial)
