"""Exact pruning: a block's maximum from the collapsed cubes equals the tuple-by-tuple maximum bit
for bit, so a pruned sweep never skips a block it should report, on loose and on tight tables."""

import functools

import numpy as np
import pytest

import darrm
from darrm.backends.executors import SerialExecutor
from darrm.gamma import gamma_sub, symmetric_from_upper
from darrm.params import PrivacyParams
from darrm.privacy import approx_blocks as blocks_mod
from darrm.privacy import block_maxima as maxima_mod
from darrm.privacy.approx_blocks import sweep_R
from darrm.privacy.block_maxima import ExtremeCubes, block_maximum, collapse_cells
from darrm.privacy.certify import certify_tight
from darrm.privacy.sweep import sweep
from darrm.privacy.sweep_tables import build_tables


def _tables(K: int, m: int, eps: float, Delta: float, seed: int) -> list[tuple[PrivacyParams, np.ndarray]]:
    """A random table, the all-ones table (violating), and γ_Sub at m = 1 (exactly tight: its
    constraints hold with equality) scaled until certified."""
    P = PrivacyParams(K, m, eps, Delta)
    P1 = PrivacyParams(K, 1, eps, Delta)
    rng = np.random.default_rng(seed)
    tight, cert, _ = certify_tight(gamma_sub(K, 1), P1, executor=SerialExecutor())
    assert cert.certified and cert.violation > -1e-9  # within 1e-9 of the threshold
    return [(P, symmetric_from_upper(rng.uniform(size=(K + 1) // 2), K)), (P, np.ones(K + 1)), (P1, tight)]


def _agree(a, b) -> bool:
    """Same maximum bit for bit, same coverage, same reported violations (candidates up to ties)."""
    return (a.max_violation == b.max_violation and a.checked == b.checked
            and np.array_equal(np.sort(a.violations), np.sort(b.violations)))


def _blockwise_mismatches(P: PrivacyParams, g: np.ndarray) -> list[tuple[int, int]]:
    """The blocks (R, n_(hi,lo)) whose collapsed maximum differs from the tuple-by-tuple one."""
    T = build_tables(g, P)
    out = []
    for R in range(P.K + 1):
        cd = P.K - R
        for c in range((cd + 1) // 2, cd + 1):
            one = frozenset({c})  # the same rows V(·, c, d), V(·, d, c) either way
            exact = sweep_R(T, R, P.check, 0, 0.0, 1, only=one, prune=False).max_violation
            collapsed = sweep_R(T, R, P.check, 0, 0.0, 1, only=one, prune=True).max_violation
            if collapsed != exact:
                out.append((R, c))
    return out


@pytest.mark.parametrize("K,m,Delta", [(5, 1, 1e-3), (13, 3, 1e-5), (21, 1, 0.02)])
def test_block_maximum_equals_the_tuple_maximum_bit_for_bit(K, m, Delta):
    for P, g in _tables(K, m, 0.3, Delta, K):
        assert _blockwise_mismatches(P, g) == []


def test_block_maximum_reads_only_cells_of_real_multisets():
    """Reusing one R's cubes across blocks (stale cells) gives the fresh-cube value."""
    P, g = _tables(9, 2, 0.3, 1e-3, 4)[0]
    rng = np.random.default_rng(5)
    for R in (0, 3, 9):
        n = (R + 1) * (R + 2) * (R + 3) // 6
        cubes = ExtremeCubes(R)
        for _ in range(3):
            A, B = rng.uniform(size=n), rng.uniform(size=n)
            assert block_maximum(A, B, R, P.check, cubes) == block_maximum(A, B, R, P.check)


@functools.lru_cache(maxsize=1)
def _optimal(K: int, m: int, Delta: float) -> tuple[PrivacyParams, np.ndarray]:
    P = PrivacyParams(K, m, 0.1, Delta)
    return P, darrm.solve(P, darrm.IIDPrior(0.75)).gamma


def test_pruning_on_gamma_opt_at_K41_equals_the_exhaustive_sweep_block_by_block():
    """γ_opt is tight (its largest violation within 1e-12 of 0): each of its 462 blocks' maxima bit
    for bit, and a pruned constraint-generation sweep (the 20 worst blocks within 1e-3) as the
    exhaustive one."""
    P, g = _optimal(41, 5, 1e-5)
    full = sweep(g, P, top=20, threshold=-1e-3, prune=False, executor=SerialExecutor())
    assert full.max_violation > -1e-12
    assert _blockwise_mismatches(P, g) == []
    pruned = sweep(g, P, top=20, threshold=-1e-3, prune=True, executor=SerialExecutor())
    assert _agree(pruned, full) and pruned.candidates.shape == full.candidates.shape == (20, 8)


def _fill_without(skip: str):
    """:meth:`ExtremeCubes.fill` with one extreme pass left out — a plausible bug: ``"split"``
    ignores how s splits into n_1 + n_5 (no pass along s′), ``"n2"`` takes n_2 at its largest
    value only (no pass along a′)."""

    def fill(self, B):
        S = self.R + 1
        lo, hi = self.lo, self.hi
        flo, fhi = lo.reshape(-1), hi.reshape(-1)
        _, write = collapse_cells(self.R)
        flo[write] = B
        fhi[write] = B
        if skip != "split":
            for s in range(S - 2, -1, -1):
                np.minimum(lo[:, s + 1], lo[:, s], out=lo[:, s])
                np.maximum(hi[:, s + 1], hi[:, s], out=hi[:, s])
        if skip != "n2":
            for a in range(1, S):
                np.minimum(lo[a - 1], lo[a], out=lo[a])
                np.maximum(hi[a - 1], hi[a], out=hi[a])
        return flo, fhi

    return fill


@pytest.mark.parametrize("skip", ["split", "n2"])
def test_a_collapse_missing_either_extreme_pass_is_caught(monkeypatch, skip):
    """The blockwise comparison has teeth against a subtly wrong collapse, not only a scaled
    bound.  (On tight tables the extreme cells usually hold the maximum, so a random table is
    where such a bug shows: tight tables alone would not catch it.)"""
    P, g = _tables(13, 3, 0.3, 1e-5, 13)[0]
    assert _blockwise_mismatches(P, g) == []
    monkeypatch.setattr(ExtremeCubes, "fill", _fill_without(skip))
    assert _blockwise_mismatches(P, g) != []


@pytest.mark.parametrize("top,threshold,diverse", [(1, -np.inf, True), (20, 0.0, True), (20, 0.0, False),
                                                   (0, 0.0, True), (20, -1e-3, True)])
def test_pruned_sweep_equals_the_exhaustive_sweep_on_tight_tables(top, threshold, diverse):
    cases = _tables(17, 3, 0.3, 1e-4, 1) + [_optimal(21, 3, 1e-5)]
    for P, g in cases:
        full = sweep(g, P, top=top, threshold=threshold, diverse=diverse, prune=False, executor=SerialExecutor())
        pruned = sweep(g, P, top=top, threshold=threshold, diverse=diverse, prune=True, executor=SerialExecutor())
        assert _agree(pruned, full)
        if top and np.isfinite(threshold):  # every violating block is still reported
            assert pruned.candidates.shape == full.candidates.shape


def test_pruned_certificate_at_K41_equals_the_exhaustive_one():
    P = PrivacyParams(41, 1, 0.1, 1e-5)
    g, cert, _ = certify_tight(gamma_sub(41, 1), P, executor=SerialExecutor())
    assert cert.violation > -1e-9
    full = sweep(g, P, top=1, threshold=-np.inf, prune=False, executor=SerialExecutor())
    pruned = sweep(g, P, top=1, threshold=-np.inf, prune=True, executor=SerialExecutor())
    assert _agree(pruned, full) and pruned.max_violation == cert.violation


@pytest.mark.parametrize("two_phase", [True, False], ids=["two-phase", "per-R"])
def test_a_deliberately_wrong_block_bound_is_caught(monkeypatch, two_phase):
    """The comparison has teeth: a bound scaled down (an unsound pruning rule) changes the result,
    whether the maxima are taken all first (:mod:`darrm.privacy.two_phase`, a sweep over every block)
    or per R (a screening pass, here given every block)."""
    P, g = _tables(13, 3, 0.3, 1e-3, 2)[1]  # all-ones: violating blocks to hide
    full = sweep(g, P, top=20, threshold=0.0, prune=False, executor=SerialExecutor())
    real = blocks_mod.block_maximum

    def scaled_down(*args, **kw):
        m = real(*args, **kw)
        return m - 0.5 * abs(m) - 1e-3

    every = None if two_phase else [(c, d) for c in range(P.K + 1) for d in range(c + 1) if c + d <= P.K]
    monkeypatch.setattr(blocks_mod, "block_maximum", scaled_down)
    monkeypatch.setattr(maxima_mod, "block_maximum", scaled_down)
    wrong = sweep(g, P, top=20, threshold=0.0, prune=True, executor=SerialExecutor(), blocks=every)
    assert not _agree(wrong, full)
