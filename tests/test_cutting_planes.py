import numpy as np
import pytest

from darrm.certify import certify
from darrm.cutting_planes import orientations
from darrm.lp import choose_method, solve_gamma_opt
from darrm.params import PrivacyParams
from darrm.prior import IIDPrior, IndependentPrior


@pytest.mark.parametrize(
    "K,m,Delta",
    [(11, 3, 1e-5), (13, 5, 1e-5), (15, 3, 1e-4), (21, 5, 1e-5), (31, 3, 0.0), (11, 2.5, 0.0)],
)
def test_constraint_generation_matches_the_full_lp(K, m, Delta):
    """Same optimum as the full-enumeration LP to 1e-9, both certified."""
    P = PrivacyParams(K, m, 0.1, Delta)
    full = solve_gamma_opt(P, method="full")
    cp = solve_gamma_opt(P, method="cutting-planes")
    assert cp.info["method"] == "cutting-planes" and full.info["method"] == "full"
    assert cp.objective == pytest.approx(full.objective, abs=1e-9)
    for t in (full, cp):
        assert certify(t.gamma, P).violation <= 1e-12
    if Delta > 0:
        assert cp.info["working_set"] < cp.info["multisets"] / 10


def test_constraint_generation_with_a_non_iid_prior():
    P = PrivacyParams(15, 3, 0.1, 1e-5)
    pr = IndependentPrior(tuple(np.linspace(0.55, 0.95, 15)))
    assert solve_gamma_opt(P, pr, method="cutting-planes").objective == pytest.approx(
        solve_gamma_opt(P, pr, method="full").objective, abs=1e-9
    )


def test_orientations_are_the_swap_and_reflection_of_the_corner_set():
    from darrm.corners import corners

    cs = corners(0.3, 0.01)
    v = np.array([[1, 2, 0, 3, 0, 1, 4, 0]])
    o = orientations(v)
    pts = lambda cnt: sorted(map(tuple, np.repeat(cs, cnt, axis=0).round(12)))
    base = pts(v[0])
    assert pts(o[1]) == sorted(tuple(np.round((q, p), 12)) for p, q in base)  # swap
    assert pts(o[2]) == sorted(tuple(np.round((1 - p, 1 - q), 12)) for p, q in base)  # reflect


def test_checkpoint_resumes_with_the_same_working_set(tmp_path):
    P = PrivacyParams(17, 3, 0.1, 1e-5)
    ck = tmp_path / "ws.npz"
    a = solve_gamma_opt(P, method="cutting-planes", checkpoint=str(ck))
    assert ck.exists() and not a.info["resumed"]
    b = solve_gamma_opt(P, method="cutting-planes", checkpoint=str(ck))
    assert b.info["resumed"] and b.info["rounds"] <= 2
    assert b.objective == pytest.approx(a.objective, abs=1e-12)
    # a checkpoint for other parameters is ignored, not trusted
    c = solve_gamma_opt(PrivacyParams(17, 5, 0.1, 1e-5), method="cutting-planes", checkpoint=str(ck))
    assert not c.info["resumed"]


def test_auto_picks_the_path_by_size():
    assert choose_method(PrivacyParams(9, 3, 0.1, 1e-5)) == "full"
    assert choose_method(PrivacyParams(11, 3, 0.1, 1e-5)) == "cutting-planes"
    assert choose_method(PrivacyParams(11, 3, 0.1, 0.0)) == "full"
    assert choose_method(PrivacyParams(101, 3, 0.1, 0.0)) == "cutting-planes"


def test_unconverged_generation_is_refused_or_certified_with_a_stated_gap():
    from darrm.errors import SolveError

    P = PrivacyParams(21, 5, 0.1, 1e-5)
    with pytest.raises(SolveError, match="did not converge"):
        solve_gamma_opt(P, method="cutting-planes", max_rounds=1)
    opt = solve_gamma_opt(P, method="cutting-planes")
    early = solve_gamma_opt(P, method="cutting-planes", max_rounds=2, accept_gap=True)
    assert certify(early.gamma, P).certified  # privacy is never approximate
    assert not early.info["converged"] and "not converged" in early.status
    gap = early.info["optimality_gap"]
    assert early.objective >= opt.objective - 1e-12
    assert early.objective - opt.objective <= gap + 1e-9  # the gap is a valid bound
    assert opt.info["converged"] and opt.info["optimality_gap"] <= 1e-6
