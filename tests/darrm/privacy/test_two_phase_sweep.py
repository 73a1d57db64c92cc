"""The two-phase pruned sweep (every block's exact maximum, then only the worst blocks visited) gives
the exhaustive sweep's result bit for bit on tight tables, visits only what it must, and a wrong
bound or a wrong stop is caught."""

import functools
import math

import numpy as np
import pytest

import darrm
from darrm.backends.adapters import JoblibExecutor
from darrm.backends.executors import SerialExecutor
from darrm.gamma import gamma_sub, symmetric_from_upper
from darrm.params import PrivacyParams
from darrm.privacy import block_maxima as maxima_mod
from darrm.privacy import sweep as sweep_module
from darrm.privacy import two_phase
from darrm.privacy.certify import certify, certify_tight


@functools.lru_cache(maxsize=None)
def _cases() -> tuple[tuple[PrivacyParams, np.ndarray], ...]:
    """Deliberately tight tables (largest violation within 1e-9 of 0: γ_Sub at m = 1 scaled until
    certified, γ_opt at K = 21), a violating one (γ ≡ 1) and a random one."""
    P1 = PrivacyParams(41, 1, 0.1, 1e-5)
    tight, cert, _ = certify_tight(gamma_sub(41, 1), P1, executor=SerialExecutor())
    assert cert.certified and cert.violation > -1e-9
    P21 = PrivacyParams(21, 3, 0.1, 1e-5)
    opt = darrm.solve(P21, darrm.IIDPrior(0.75), progress=False).gamma
    P17 = PrivacyParams(17, 3, 0.3, 1e-4)
    rng = np.random.default_rng(7)
    return ((P1, tight), (P21, opt), (P17, np.ones(18)), (P17, symmetric_from_upper(rng.uniform(size=9), 17)))


def _sweeps(P, g, **kw):
    """(exhaustive, two-phase) sweeps of one table, serially."""
    return sweep(P, g, prune=False, **kw), sweep(P, g, prune=True, **kw)


def sweep(P, g, **kw):
    return sweep_module.sweep(g, P, executor=kw.pop("executor", SerialExecutor()), **kw)


def _identical(a, b) -> None:
    """Same maximum and coverage bit for bit, same reported violations in the same order (the
    candidates up to ties)."""
    assert a.max_violation == b.max_violation
    assert a.checked == b.checked
    np.testing.assert_array_equal(a.violations, b.violations)
    assert a.candidates.shape == b.candidates.shape


@pytest.mark.parametrize("top,threshold,diverse", [(1, -np.inf, True), (20, 0.0, True), (20, -1e-3, True),
                                                   (20, -1e-3, False), (3, -np.inf, False), (0, 0.0, True)])
def test_two_phase_sweep_equals_the_exhaustive_sweep_on_tight_tables(top, threshold, diverse):
    for P, g in _cases():
        full, two = _sweeps(P, g, top=top, threshold=threshold, diverse=diverse)
        _identical(two, full)


def test_two_phase_certificate_equals_the_exhaustive_sweep():
    """The certificate (two-phase pruned sweep) reports the maximum and coverage of the sweep that
    visits every tuple, bit for bit, and certifies exactly when that maximum is ≤ 0."""
    for P, g in _cases():
        full = sweep(P, g, top=1, threshold=-np.inf, prune=False)
        two = certify(g, P, executor=SerialExecutor())
        assert two.violation == full.max_violation and two.checked == full.checked
        assert two.certified == (full.max_violation <= 0.0)


def _counting_visits(monkeypatch) -> list:
    seen: list = []
    real = sweep_module.run_block

    def counting(recipe, item):
        seen.append(item)
        return real(recipe, item)

    monkeypatch.setattr(sweep_module, "run_block", counting)
    return seen


def test_a_certificate_visits_one_block_in_all(monkeypatch):
    P, g = _cases()[0]
    seen = _counting_visits(monkeypatch)
    res = sweep(P, g, top=1, threshold=-np.inf, prune=True)
    assert len(seen) == 1 and len(seen[0][1]) == 1  # one R, one block of it
    assert res.checked == math.comb(P.K + 7, 7)  # every multiset covered


def test_cut_generation_visits_at_most_top_blocks(monkeypatch):
    P, g = _cases()[2]  # γ ≡ 1 violates in most blocks
    seen = _counting_visits(monkeypatch)
    res = sweep(P, g, top=5, threshold=0.0, prune=True)
    assert sum(len(cs) for _, cs in seen) == 5 and res.candidates.shape == (5, 8)


def test_without_a_per_block_limit_the_top_worst_blocks_still_decide(monkeypatch):
    """diverse=False: a block may give many candidates, yet the ``top`` worst blocks hold the
    exhaustive top ones (each block's maximum is one of its candidates): no more are visited."""
    P, g = _cases()[2]
    full = sweep(P, g, top=5, threshold=0.0, diverse=False, prune=False)
    seen = _counting_visits(monkeypatch)
    two = sweep(P, g, top=5, threshold=0.0, diverse=False, prune=True)
    _identical(two, full)
    assert sum(len(cs) for _, cs in seen) == 5


def test_a_visit_that_misses_the_worst_block_is_caught(monkeypatch):
    """The comparison has teeth against a wrong choice of blocks (the worst one left out)."""
    P, g = _cases()[2]
    full = sweep(P, g, top=5, threshold=0.0, prune=False)
    real = two_phase.worst_blocks
    monkeypatch.setattr(two_phase, "worst_blocks", lambda rows, t, top: real(rows, t, top + 1)[1:])
    wrong = sweep(P, g, top=5, threshold=0.0, prune=True)
    assert wrong.max_violation == full.max_violation  # the maximum comes from phase 1 either way
    assert not np.array_equal(wrong.violations, full.violations)


@pytest.mark.parametrize("scale", [0.5, 1e-6], ids=["halved", "one-ppm"])
def test_a_deliberately_wrong_bound_is_caught(monkeypatch, scale):
    """A block maximum biased low (an unsound bound, even by a relative 1e-6 on a tight table) changes
    the two-phase result: the maximum it reports is the phase-1 maximum, so the test sees it."""
    P, g = _cases()[0]
    full = sweep(P, g, top=1, threshold=-np.inf, prune=False)
    real = maxima_mod.block_maximum
    monkeypatch.setattr(maxima_mod, "block_maximum", lambda *a, **k: (m := real(*a, **k)) - scale * abs(m))
    wrong = sweep(P, g, top=1, threshold=-np.inf, prune=True)
    assert wrong.max_violation != full.max_violation


def test_joblib_two_phase_gives_the_serial_result():
    P, g = _cases()[3]
    serial = sweep(P, g, top=7, threshold=-1.0, prune=True)
    _identical(sweep(P, g, top=7, threshold=-1.0, prune=True, executor=JoblibExecutor(2)), serial)
    np.testing.assert_array_equal(sweep(P, g, top=7, threshold=-1.0, prune=True, executor=JoblibExecutor(2)).candidates,
                                  serial.candidates)
