"""The pure-DP seed and λ ramp of constraint generation (darrm.solver.pure_rounds): seed rows are rows
of the full LP, and a solve with both ends where the old path does, certified by every multiset."""

import math

import numpy as np
import pytest

from darrm import SolveOptions
from darrm.params import PrivacyParams
from darrm.privacy.certify import certify_reference
from darrm.privacy.corners import orientations
from darrm.solver import pure_rounds
from darrm.solver.gamma_opt import solve_gamma_opt
from darrm.solver.rows import iter_row_blocks


def test_seed_rows_are_rows_of_the_full_lp():
    """Every seeded multiset, in every orientation, is a corner multiset of K members whose folded
    row (as the working set builds it, from factored binomial pmfs) equals the full LP's row for
    that multiset (Poisson-binomial dynamic programming over every multiset) to 1e-12."""
    import darrm.solver.cutting_planes as cpm
    from darrm.solver.restricted_lp import make_restricted_lp

    P = PrivacyParams(21, 3, 0.1, 0.0)
    seed = pure_rounds.seed_multisets(P)
    assert seed.shape == (22, 4) and np.all(seed.sum(axis=1) == 21) and np.all(seed >= 0)
    n = P.K - P.K // 2  # the upper half γ(mid..K)
    ws = cpm.WorkingSet(P, np.zeros(n), make_restricted_lp("highs", np.zeros(n), P.rhs), None)
    new = ws.new_among(seed)
    assert new.shape[0] == len({tuple(r) for r in orientations(seed).tolist()}) == 4 * 22 - 4
    full = {tuple(cv): row for counts, rows in iter_row_blocks(P)
            for cv, row in zip(counts.tolist(), rows, strict=True)}
    mine = ws._rows(new)
    for cv, row in zip(new.tolist(), mine, strict=True):
        assert np.max(np.abs(full[tuple(cv)] - row)) <= 1e-12


def test_no_seed_for_approximate_dp_members():
    assert pure_rounds.seed_multisets(PrivacyParams(21, 3, 0.1, 1e-5)).shape == (0, 8)


@pytest.mark.parametrize("K,m,stabilize", [(31, 3, "auto"), (41, 10, "auto"), (41, 10, 0.5)])
def test_seeded_ramped_generation_ends_at_the_old_optimum_certified_by_every_multiset(K, m, stabilize, monkeypatch):
    """With the seed, the λ ramp and no purge (the default) and without them (the old path), constraint
    generation reaches the same objective to 1e-9, both proven optimal (gap ≤ 1e-9); the new path
    needs fewer rounds; its final certificate swept all C(K+3, 3) multisets, and the direct
    per-multiset certificate (both outputs, both directions, Poisson-binomial pmfs) agrees.
    λ = 0.5 from the start exercises the ramp (auto stays at λ = 1 at these K)."""
    P = PrivacyParams(K, m, 0.1, 0.0)
    opts = SolveOptions(method="cutting-planes", stabilize=stabilize)
    new = solve_gamma_opt(P, options=opts)
    monkeypatch.setattr(pure_rounds, "PURE_SEED", False)
    monkeypatch.setattr(pure_rounds, "PURE_RAMP", False)
    monkeypatch.setattr(pure_rounds, "PURE_KEEP_ROWS", False)
    old = solve_gamma_opt(P, options=opts)
    assert new.objective == pytest.approx(old.objective, abs=1e-9)
    assert new.status == old.status == "optimal"
    assert new.info["optimality_gap"] <= 1e-9 and old.info["optimality_gap"] <= 1e-9
    assert new.info["rounds"] < old.info["rounds"]
    assert new.info["multisets"] == old.info["multisets"] == math.comb(K + 3, 3)
    assert certify_reference(new.gamma, P).violation <= 0.0


@pytest.mark.parametrize("lam", [1e-6, 0.3, 0.5, 0.8, 0.95])
def test_the_ramp_reaches_the_lp_point_in_finitely_many_feasible_rounds(lam):
    """λ strictly grows and reaches 1 (separation at the LP point itself, where the classic stop
    and the LP-tolerance stop are decided) after at most log2(1/RAMP_FLOOR) + log2(1/(1 − λ)) steps."""
    seen = [lam]
    while seen[-1] < 1.0:
        seen.append(pure_rounds.ramp_lambda(seen[-1]))
        assert seen[-1] > seen[-2] and seen[-1] <= 1.0
        assert len(seen) <= 4 + math.ceil(math.log2(1.0 / (1.0 - lam)))
    assert pure_rounds.ramp_lambda(0.5) == 0.75 and pure_rounds.ramp_lambda(0.875) == 1.0


def test_the_ramp_is_for_pure_dp_only(monkeypatch):
    assert pure_rounds.ramps(PrivacyParams(21, 3, 0.1, 0.0))
    assert not pure_rounds.ramps(PrivacyParams(21, 3, 0.1, 1e-5))
    monkeypatch.setattr(pure_rounds, "PURE_RAMP", False)
    assert not pure_rounds.ramps(PrivacyParams(21, 3, 0.1, 0.0))


def test_pure_dp_keeps_every_row_and_approximate_dp_purges(monkeypatch):
    assert pure_rounds.purge_rounds(PrivacyParams(21, 3, 0.1, 0.0)) == 0
    assert pure_rounds.purge_rounds(PrivacyParams(21, 3, 0.1, 1e-5)) == pure_rounds.PURGE_AFTER == 5
    monkeypatch.setattr(pure_rounds, "PURE_KEEP_ROWS", False)
    assert pure_rounds.purge_rounds(PrivacyParams(21, 3, 0.1, 0.0)) == 5


def test_none_of_the_changes_applies_at_large_meps():
    """Above PURE_MAX_MEPS the rows hold entries ~e^{mε}: the old path runs (issue 23's scan)."""
    P = PrivacyParams(21, 3, 4.0, 0.0)  # mε = 12
    assert pure_rounds.seed_multisets(P).shape[0] == 0
    assert not pure_rounds.ramps(P) and pure_rounds.purge_rounds(P) == pure_rounds.PURGE_AFTER
