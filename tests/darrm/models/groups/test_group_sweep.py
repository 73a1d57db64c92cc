"""The factorised grouped sweep (darrm.models.groups.sweep) against evaluations that visit every configuration.

Three references, from the closest to the most independent:

- every configuration (output 1, D → D′) evaluated from the sweep's own V table, indexed by each multiset's A- and
  B-tuples computed here from its counts (not from the sweep's layout, boxes or passes): the
  running extremes must give the same largest v̂ **bit for bit**;
- today's exhaustive certificate (pmfs by the Poisson-binomial recurrence per multiset, all four
  families), which rounds differently: equal to the rounding bound 2ρ(1 + e^ε) (the other three
  families are images of the first under the joint swap and reflection);
- the 40-digit brute force of tests/darrm/models/groups/test_group_certificate.py (which now runs through the
  sweep, since :func:`certify_groups` is the sweep).

A sweep with a broken box (a pass left out) must be caught by the first reference.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import darrm.models.groups.sweep as gs
from darrm.gamma import symmetric_from_upper
from darrm.mechanism import output_weights
from darrm.models.groups.certificate import certify_groups, group_pmfs, joint_pmf
from darrm.models.groups.contraction import inner_table
from darrm.models.groups.params import GroupParams
from darrm.privacy.condition import violation
from darrm.privacy.corners import count_vectors

PARAMS = [
    GroupParams(((3, 0.2, 1e-4), (2, 0.6, 1e-4)), 0.9, 1e-3),
    GroupParams(((2, 0.3, 1e-3), (3, 0.8, 0.0)), 0.9, 2e-3),
    GroupParams(((2, 0.1, 0.0), (1, 0.5, 1e-3), (2, 0.9, 1e-4)), 1.0, 1e-3),
    GroupParams(((5, 0.25, 1e-4),), 0.5, 2e-4),
    GroupParams(((4, 0.1, 1e-5), (3, 0.3, 1e-5)), 0.5, 1e-4),
]


def _gammas(K: int) -> list[np.ndarray]:
    rng = np.random.default_rng(K)
    mid = (K + 1) // 2
    out = [symmetric_from_upper(rng.uniform(0, 1, K + 1 - mid), K) for _ in range(4)]
    return out + [np.ones(K + 1)]


def _tuples_of_counts(counts: np.ndarray, pure: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each multiset's A-tuple (the pmf under D) and B-tuple (under D′), from the corners'
    coordinates: α = β(n_1 + n_5, n_3, n_4, n_6, n_7), α′ = β(n_1 + n_4, n_2, n_5, n_7, n_6)."""
    n = counts.astype(np.int64)
    if pure:
        z = np.zeros(n.shape[0], dtype=np.int64)
        return (np.stack([n[:, 1], z, z, n[:, 2], n[:, 3]], axis=1),
                np.stack([n[:, 1], z, z, n[:, 3], n[:, 2]], axis=1))
    A = np.stack([n[:, 1] + n[:, 5], n[:, 3], n[:, 4], n[:, 6], n[:, 7]], axis=1)
    B = np.stack([n[:, 1] + n[:, 4], n[:, 2], n[:, 5], n[:, 7], n[:, 6]], axis=1)
    return A, B


def _indices(params: GroupParams) -> tuple[list, list[np.ndarray], list[np.ndarray]]:
    """The groups' layouts and, for every multiset of each group, the layout positions of its A- and
    B-tuples, computed from the counts (not from the sweep's boxes)."""
    lays = [gs.tuples_of(g) for g in params.groups]
    ia, ib = [], []
    for lay, g in zip(lays, params.groups, strict=True):
        where = {tuple(int(x) for x in t): i for i, t in enumerate(lay.tuples)}
        A, B = _tuples_of_counts(count_vectors(g.size, g.corners), lay.pure)
        ia.append(np.array([where[tuple(int(x) for x in t)] for t in A]))
        ib.append(np.array([where[tuple(int(x) for x in t)] for t in B]))
    return lays, ia, ib


def _table(gamma: np.ndarray, lays: list) -> np.ndarray:
    """V over every tuple combination in one chunk, as the sweep computes it."""
    return gs.table(lays[0].beta, gs.inner_first(inner_table([lay.beta for lay in lays], output_weights(gamma))))


def extremes_from_every_configuration(gamma: np.ndarray, params: GroupParams) -> tuple[np.ndarray, np.ndarray]:
    """For every A-combination, the min and the max of V at the B-tuples of every configuration
    that shares it, configuration by configuration (np.minimum.at over the whole product)."""
    lays, ia, ib = _indices(params)
    V = _table(gamma, lays)
    a_idx = np.ravel_multi_index(np.ix_(*ia), V.shape).ravel()
    b_val = V[np.ix_(*ib)].ravel()
    lo, hi = np.full(V.size, np.inf), np.full(V.size, -np.inf)
    np.minimum.at(lo, a_idx, b_val)
    np.maximum.at(hi, a_idx, b_val)
    return lo.reshape(V.shape), hi.reshape(V.shape)


def every_configuration_from_the_tables(gamma: np.ndarray, params: GroupParams) -> float:
    """The largest v̂ of output 1, D → D′, over every configuration, each evaluated from the V table
    of all tuple combinations (one chunk, as the sweep computes it)."""
    lays, ia, ib = _indices(params)
    V = _table(gamma, lays)
    P, Pp = V[np.ix_(*ia)], V[np.ix_(*ib)]
    chk = params.check
    return float(violation(P, Pp, chk).max())


def _collapsed(gamma: np.ndarray, params: GroupParams) -> tuple[np.ndarray, np.ndarray]:
    lays = [gs.tuples_of(g) for g in params.groups]
    V = _table(gamma, lays)
    runs = tuple((0, lay.tuples.shape[0]) for lay in lays)
    return gs.collapse(V, lays, runs, np.minimum), gs.collapse(V, lays, runs, np.maximum)


@pytest.mark.parametrize("params", PARAMS)
def test_running_extremes_equal_every_configurations_extremes_bit_for_bit(params):
    """Box by box, group by group: each A-combination's min (and, by the same passes, max) of V over
    its configurations, and so the largest v̂, exactly as visiting every configuration gives them."""
    for gamma in _gammas(params.K):
        lo, hi = _collapsed(gamma, params)
        ref_lo, ref_hi = extremes_from_every_configuration(gamma, params)
        np.testing.assert_array_equal(lo, ref_lo)
        np.testing.assert_array_equal(hi, ref_hi)
        got = gs.sweep_groups(gamma, params, chunk_entries=1 << 40)
        assert got.max_violation == every_configuration_from_the_tables(gamma, params)


@pytest.mark.parametrize("params", PARAMS)
def test_the_sweep_equals_the_exhaustive_certificate_to_the_rounding_bound(params):
    """Two evaluations of the same exact numbers, rounded differently: |Δv̂| ≤ 2ρ(1 + e^ε)."""
    chk = params.check
    tol = 2.0 * chk.rho * (1.0 + chk.exp_eps)
    for gamma in _gammas(params.K):
        new, old = certify_groups(gamma, params), certify_groups(gamma, params, exhaustive=True)
        assert abs(new.violation - old.violation) <= tol
        assert new.checked == old.checked == params.configurations


@pytest.mark.parametrize("params", PARAMS[:3])
def test_small_chunks_give_the_one_chunk_answer(params):
    """Chunks of whole block pairs cover every A-combination's box: many chunks, the same maximum
    (to the rounding bound: the BLAS may sum a differently shaped product in another order)."""
    chk = params.check
    for gamma in _gammas(params.K)[:2]:
        one = gs.sweep_groups(gamma, params, chunk_entries=1 << 40)
        many = gs.sweep_groups(gamma, params, chunk_entries=1)
        assert abs(one.max_violation - many.max_violation) <= 2.0 * chk.rho * (1.0 + chk.exp_eps)


def _configuration_violation(params: GroupParams, direction: int, counts: tuple[int, ...], gamma) -> float:
    """v̂ of one configuration by the exhaustive route (per-multiset pmfs, their convolution)."""
    pm, start, idx = [], 0, []
    for g in params.groups:
        cv, a, ap = group_pmfs(g)
        want = np.array(counts[start:start + g.corners])
        start += g.corners
        i = int(np.flatnonzero((cv == want).all(axis=1))[0])
        pm.append((a, ap))
        idx.append(i)
    ix = np.array([idx])
    a = joint_pmf([p[0] for p in pm], ix)[0]
    ap = joint_pmf([p[1] for p in pm], ix)[0]
    w = output_weights(gamma)
    P, Pp = float(a @ w), float(ap @ w)
    return float(violation(P, Pp, params.check) if direction == 0 else violation(Pp, P, params.check))


@pytest.mark.parametrize("params", PARAMS[:3])
def test_candidates_are_configurations_with_the_reported_violation(params):
    """Each reported cut names a configuration whose own v̂ (computed the exhaustive way) is the
    reported one, most violated first; excluded keys are not reported again."""
    chk = params.check
    tol = 2.0 * chk.rho * (1.0 + chk.exp_eps)
    gamma = _gammas(params.K)[0]
    res = gs.sweep_groups(gamma, params, top=6, threshold=-1.0)
    assert len(res.candidates) == 6
    vals = [v for v, _, _ in res.candidates]
    assert vals == sorted(vals, reverse=True) and abs(vals[0] - res.max_violation) <= tol
    for v, j, counts in res.candidates:
        starts = np.cumsum([0] + [g.corners for g in params.groups])[:-1]
        assert [sum(counts[i:i + g.corners]) for i, g in zip(starts, params.groups, strict=True)] == \
            [g.size for g in params.groups]
        assert abs(_configuration_violation(params, j, counts, gamma) - v) <= tol
    j, worst = res.worst
    assert abs(_configuration_violation(params, j, worst, gamma) - res.max_violation) <= tol
    again = gs.sweep_groups(gamma, params, top=6, threshold=-1.0, exclude={(j_, c) for _, j_, c in res.candidates[:2]})
    assert {(j_, c) for _, j_, c in again.candidates}.isdisjoint({(j_, c) for _, j_, c in res.candidates[:2]})


@pytest.mark.parametrize("broken", ["no s′ pass", "no a′ pass"])
def test_a_box_missing_configurations_is_caught(monkeypatch, broken):
    """Running extremes that skip one pass cover too few configurations: the bit-for-bit comparison
    with every configuration's extremes fails."""
    params = PARAMS[0]
    gamma = _gammas(params.K)[0]
    ref_lo, ref_hi = extremes_from_every_configuration(gamma, params)

    def partial(X, axis, lay, start, stop, fn):
        Y = np.moveaxis(X, axis, 0)
        for off, nA, nS in lay.rects:
            if start <= off < stop and nA * nS > 1:
                r = Y[off - start: off - start + nA * nS].reshape((nA, nS) + Y.shape[1:])
                if broken != "no s′ pass":
                    for s in range(nS - 2, -1, -1):
                        fn(r[:, s + 1], r[:, s], out=r[:, s])
                if broken != "no a′ pass":
                    for a in range(1, nA):
                        fn(r[a - 1], r[a], out=r[a])

    monkeypatch.setattr(gs, "_passes", partial)
    lo, hi = _collapsed(gamma, params)
    assert (lo >= ref_lo).all() and (hi <= ref_hi).all()  # extremes over a subset
    assert (lo > ref_lo).any() and (hi < ref_hi).any()  # which the comparison catches


def test_the_layout_covers_every_tuple_once_and_boxes_stay_in_their_block_pair():
    """Structural facts the claim uses: each group's layout lists every tuple with s + a + b + c + d
    ≤ K_g exactly once, and each A-tuple reads a cell of its own block pair with (c, d) exchanged."""
    for size, Delta in [(4, 1e-4), (3, 0.0)]:
        lay = gs.group_tuples(size, 0.3, Delta)
        want = {t for t in itertools.product(range(size + 1), repeat=5) if sum(t) <= size
                and (Delta > 0 or t[1] == t[2] == 0)}
        assert sorted(map(tuple, lay.tuples.tolist())) == sorted(want)
        for start, stop in lay.pairs:
            r = lay.read[start:stop]
            assert ((r >= start) & (r < stop)).all()
        read = lay.tuples[lay.read]
        np.testing.assert_array_equal(read[:, 3:], lay.tuples[:, [4, 3]])
        # the read cell is (s′, a′, b′) = (b, R − σ, s): s′ + b′ = s + b
        np.testing.assert_array_equal(read[:, 0] + read[:, 2], lay.tuples[:, 0] + lay.tuples[:, 2])


def test_a_memory_budget_below_the_sweeps_estimate_is_refused_up_front():
    """The sweep's memory (β rows, one inner table, chunk arrays) is estimated and refused before any
    work when over ``max_memory``, naming it; the exhaustive evaluation has its own, larger estimate."""
    import darrm

    params = PARAMS[0]
    gamma = _gammas(params.K)[0]
    need = gs.sweep_memory(params)
    with pytest.raises(darrm.ParameterError, match="max_memory"):
        certify_groups(gamma, params, max_memory=need / 2)
    assert certify_groups(gamma, params, max_memory=need).violation == gs.sweep_groups(gamma, params).max_violation
    big = GroupParams(((16, 0.1, 1e-5), (15, 0.3, 1e-5)), 0.5, 1e-4)
    assert gs.sweep_memory(big) < 2**30  # K = 31: fits, though the product has 4.2·10¹⁰ configurations
