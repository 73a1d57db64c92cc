"""γ designed for a total budget: the multi-pair LP, the composition certificate, the comparison with
every per-query family, the API, the CLI and the γ file; and for one designed table and Q, the same
total from every door (designer's record, session, ``darrm account queries``, API, ``darrm verify``)."""

from __future__ import annotations

import itertools
import json
import math

import mpmath
import numpy as np
import pytest
from references.profile_reference import cloud_reference, profile_reference
from scipy.stats import norm

import darrm
from darrm.accounting.budget import design_for_budget
from darrm.accounting.budget.shared import design_shared
from darrm.accounting.queries import composed_epsilon, fresh_bound
from darrm.budget.spec import TotalBudget
from darrm.budget.targets import conservative_pairs, default_grid, gdp_delta, gdp_mu_for_total
from darrm.errors import CertificationError, GammaFileError, ParameterError
from darrm.gamma import gamma_const, gamma_sub, symmetric_from_upper
from darrm.gamma_file import checksum
from darrm.models.profile import privacy_profile
from darrm.prior import IIDPrior
from darrm.privacy.profile import upper_hull
from darrm.solver.full_lp import build_rows
from darrm.solver.gamma_opt import solve_gamma_opt
from darrm.solver.multi_pair import ProfilePair, build_pair_rows, solve_pairs, solve_pairs_full
from darrm.solver.objective import expected_signed_error, objective_coefficients

# small settings: K = 5 has 792 corner multisets (Δ > 0), a design takes seconds
K5 = dict(K=5, eps=0.3, member_delta=1e-4)
BUDGET5 = TotalBudget(1.5, 1e-3, 3)


@pytest.fixture(scope="module")
def design5():
    return design_for_budget(darrm.PrivacyParams(K5["K"], 1, K5["eps"], K5["member_delta"]), BUDGET5)


@pytest.fixture
def cli_designs_through_design5(design5, monkeypatch):
    """The shared-members designer, answering ``design5``'s own problem (K, ε, Δ, budget, default prior,
    no option but ``log``) with ``design5`` (the search is deterministic: the same arguments give the same
    design) and any other by a real design.  A ``darrm solve --total-eps`` test then proves the CLI's
    wiring (its flags reach the designer as exactly these arguments, and it writes, prints and verifies
    the table the designer returned) without a second search of one problem.  Returns the list of the
    arguments answered from ``design5`` (a test asserts the CLI reached it)."""
    from darrm.accounting.budget import DESIGNERS, Designer

    real = DESIGNERS["shared"]
    answered: list = []

    def design(params, budget, prior=None, **options):
        key = (params.K, params.eps, params.member_delta, budget, IIDPrior() if prior is None else prior)
        if key == (K5["K"], K5["eps"], K5["member_delta"], BUDGET5, IIDPrior()) and set(options) <= {"log"}:
            answered.append(key)
            return design5
        return real.design(params, budget, prior, **options)

    monkeypatch.setitem(DESIGNERS, "shared", Designer(design, real.verify))
    return answered


# ------------------------------------------------------------------ the multi-pair LP
@pytest.mark.parametrize("m", [1.0, 2.5])
def test_one_pair_rows_and_lp_are_todays_gamma_opt(m):
    p = darrm.PrivacyParams(K=7, m=m, eps=0.1, member_delta=1e-5)
    rows, idx, r = build_pair_rows(7, 0.1, 1e-5, [(p.m * p.eps, p.delta)])
    assert np.array_equal(rows, build_rows(p)) and r == p.rhs and not idx.any()
    c, _ = objective_coefficients(7, IIDPrior())
    today = solve_gamma_opt(p, IIDPrior(), options=darrm.SolveOptions(method="full")).gamma[4:]
    assert np.max(np.abs(solve_pairs_full(7, 0.1, 1e-5, [(p.m * p.eps, p.delta)], c) - today)) <= 1e-12
    x, info = solve_pairs(7, 0.1, 1e-5, [(p.m * p.eps, p.delta)], c)
    assert np.max(np.abs(x - today)) <= 1e-9 and info["max_violation"] <= 1e-10


def test_multi_pair_lp_bounds_the_exact_profile_at_every_pair_and_binds():
    """Each pair's rows are the exact condition δ_γ(ε′) ≤ δ′ (checked by the brute-force mpmath
    profile); the optimum is tight at some pair (so the rows are not just loose)."""
    K, eps, Delta = 5, 0.3, 1e-4
    pairs = [ProfilePair(e, 0.2 * math.exp(-2.0 * e) + 1e-4) for e in (0.1, 0.4, 0.8, 1.2)]
    c, _ = objective_coefficients(K, IIDPrior())
    x, info = solve_pairs(K, eps, Delta, pairs, c, cuts_per_round=8)
    g = symmetric_from_upper(x, K)
    ref = profile_reference(g, darrm.PrivacyParams(K, 1, eps, Delta), np.array([p.eps for p in pairs]))
    bounds = np.array([p.delta for p in pairs])
    assert np.all(ref <= bounds * (1 + 1e-8) + 1e-12)
    assert np.max(ref / bounds) > 1 - 1e-6
    assert {k for _, k in info["cuts"]} <= set(range(len(pairs)))


def test_multi_pair_rows_are_divided_by_their_right_hand_side():
    pairs = [ProfilePair(0.2, 1e-3), ProfilePair(0.5, 1e-4)]
    rows, idx, r = build_pair_rows(3, 0.3, 1e-4, pairs, prune=False)
    assert r == 1.0 and set(idx.tolist()) == {0, 1}
    one = [build_pair_rows(3, 0.3, 1e-4, [p], prune=False)[0] for p in pairs]
    for k, p in enumerate(pairs):
        np.testing.assert_allclose(rows[idx == k] * p.rhs, one[k], rtol=1e-15, atol=0)


def test_conservative_grid_bounds_the_profile_between_grid_points():
    K, eps, Delta = 5, 0.3, 1e-4
    grid = default_grid(K, eps, 12)
    target = gdp_delta(grid, 0.4)
    c, _ = objective_coefficients(K, IIDPrior())
    x, _ = solve_pairs(K, eps, Delta, conservative_pairs(grid, target), c)
    fine = np.linspace(grid[0], grid[-1], 200)
    ref = profile_reference(symmetric_from_upper(x, K), darrm.PrivacyParams(K, 1, eps, Delta), fine)
    assert np.all(ref <= gdp_delta(fine, 0.4) * (1 + 1e-8) + 1e-12)


def test_bad_pairs_are_refused_naming_the_field():
    with pytest.raises(ParameterError, match="delta"):
        ProfilePair(0.0, 0.0)
    with pytest.raises(ParameterError, match="eps"):
        ProfilePair(-1.0, 0.1)
    with pytest.raises(ParameterError, match="pairs"):
        build_pair_rows(3, 0.3, 0.0, [])


# ------------------------------------------------------------------ target shapes
def test_gdp_profile_matches_the_closed_form_and_its_total():
    for e, mu in [(0.0, 0.5), (0.7, 0.5), (2.0, 1.3)]:
        want = norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2)
        assert float(gdp_delta(e, mu)) == pytest.approx(want, rel=1e-12, abs=1e-16)
    mu = gdp_mu_for_total(2.0, 1e-5, 100)
    assert float(gdp_delta(2.0, math.sqrt(100) * mu)) == pytest.approx(1e-5, rel=1e-9)


# ------------------------------------------------------------------ the design
def _brute_force_composed_delta(gamma, params, queries, eps_total):
    """H_{e^ε}(P^Q ‖ Q^Q), both orders, with the dominating pair built from the brute-force mpmath
    cloud (every multiset, both outputs, both directions) and the product enumerated exactly."""
    mpmath.mp.dps = 40
    cloud = cloud_reference(gamma, params)
    a = np.array([float(pa) for pa, _ in cloud])
    b = np.array([float(pb) for _, pb in cloud])
    # outward by 1e-15 (float conversion of the mpmath points), then the envelope
    hx, hy = upper_hull(np.concatenate([np.maximum(b - 1e-15, 0), [0.0, 1.0]]),
                        np.concatenate([np.minimum(a + 1e-15, 1), [0.0, 1.0]]))
    P = [mpmath.mpf(hy[0])] + [mpmath.mpf(hy[j]) - mpmath.mpf(hy[j - 1]) for j in range(1, len(hy))]
    Qm = [mpmath.mpf(0)] + [mpmath.mpf(hx[j]) - mpmath.mpf(hx[j - 1]) for j in range(1, len(hx))]
    s = mpmath.e ** mpmath.mpf(eps_total)
    worst = mpmath.mpf(0)
    for first, second in ((P, Qm), (Qm, P)):
        total = mpmath.mpf(0)
        for combo in itertools.combinations_with_replacement(range(len(P)), queries):
            coef = mpmath.factorial(queries)
            for j in set(combo):
                coef /= mpmath.factorial(combo.count(j))
            p = mpmath.fprod(first[j] for j in combo)
            q = mpmath.fprod(second[j] for j in combo)
            total += coef * max(mpmath.mpf(0), p - s * q)
        worst = max(worst, total)
    return float(worst)


def test_designed_gamma_meets_the_budget_by_accountant_and_by_brute_force(design5):
    t = design5.table
    tb = t.info["total_budget"]
    assert tb["composed_epsilon"] <= BUDGET5.epsilon and t.family == "budget"
    again = composed_epsilon(t, BUDGET5.queries, delta_total=BUDGET5.delta, member_randomness="fresh")
    assert again.epsilon == tb["composed_epsilon"]
    assert _brute_force_composed_delta(t.gamma, t.params, BUDGET5.queries, BUDGET5.epsilon) <= BUDGET5.delta
    # and the per-query certificate it carries is a real one
    assert darrm.certify(t.gamma, t.params).certified


def test_brute_force_composition_catches_an_over_budget_gamma():
    """The independent check can fail: γ ≡ 1 (the plain majority) is far over this budget."""
    g = np.ones(6)
    p = darrm.PrivacyParams(5, 1, 0.3, 1e-4)
    assert _brute_force_composed_delta(g, p, BUDGET5.queries, BUDGET5.epsilon) > BUDGET5.delta


@pytest.mark.parametrize("K,eps,Delta,budget", [
    (5, 0.3, 1e-4, BUDGET5),
    (7, 0.1, 1e-5, TotalBudget(1.0, 1e-4, 5)),
])
def test_design_is_never_worse_than_any_per_query_family_at_the_same_total_budget(K, eps, Delta, budget, design5):
    # K = 7: the baselines and one target family (the search of every family is exercised at K = 5)
    d = design5 if K == 5 else design_shared(darrm.PrivacyParams(K, 1, eps, Delta), budget,
                                             families=("opt", "sub", "const", "rr"))
    prior = IIDPrior()
    assert d.table.objective == pytest.approx(d.winner.error, abs=1e-15)
    assert d.improvement >= 0
    # every per-query family member on a grid of m that meets the budget is no better
    base = darrm.PrivacyParams(K, 1, eps, Delta)
    checked = 0
    for m in np.linspace(1.0, K, 5):
        p = darrm.PrivacyParams(K, float(m), eps, Delta)
        cands = [solve_gamma_opt(p, prior).gamma, gamma_const(p)]
        if float(m).is_integer():
            cands.append(gamma_sub(K, int(m)))
        for g in cands:
            comp = fresh_bound([(privacy_profile(g, base), budget.queries)], budget.delta, True)
            if comp.epsilon <= budget.epsilon:
                checked += 1
                assert expected_signed_error(g, prior) >= d.winner.error - 1e-12
    assert checked > 0


def test_design_reports_which_family_won_and_refuses_an_impossible_budget(design5):
    assert design5.winner.family in design5.best
    assert design5.best[design5.winner.family] is design5.winner
    with pytest.raises(CertificationError, match="meets"):
        # δ_total below what any γ can reach except γ ≡ 0, which no family's search returns
        design_shared(darrm.PrivacyParams(5, 1, 0.3, 1e-4), TotalBudget(1e-6, 1e-12, 50), families=("sub",))


# ------------------------------------------------------------------ API, CLI, files
def test_bad_budgets_and_ignored_options_are_refused_naming_them():
    for kwargs, name in [(dict(epsilon=-1, delta=1e-5, queries=3), "epsilon"),
                         (dict(epsilon=1, delta=0.0, queries=3), "delta"),
                         (dict(epsilon=1, delta=1e-5, queries=0), "queries"),
                         (dict(epsilon=1, delta=1e-5, queries=3, member_randomness="fixed"), "member_randomness")]:
        with pytest.raises(ParameterError, match=name):
            TotalBudget(**kwargs)
    p = darrm.PrivacyParams(5, 1, 0.3, 1e-4)
    b = BUDGET5
    for kwargs, name in [(dict(family="sub"), "family"), (dict(checkpoint="x.npz"), "checkpoint"),
                         (dict(options=darrm.SolveOptions(method="full")), "method"),
                         (dict(budget=(1, 1e-5, 3)), "budget")]:
        with pytest.raises(ParameterError, match=name):
            darrm.api.check_request(p, **{"budget": b, **kwargs})
    with pytest.raises(TypeError, match="budget"):  # a total budget is designed, not solved
        darrm.solve(p, budget=b)  # type: ignore[call-arg]
    with pytest.raises(ParameterError, match="families"):
        design_shared(p, b, families=("nope",))


@pytest.mark.parametrize("argv,name", [
    (["--total-eps", "2", "--queries", "3"], "total-delta"),
    (["--total-eps", "0", "--total-delta", "1e-5", "--queries", "3"], "total-eps"),
    (["--total-eps", "2", "--total-delta", "1.5", "--queries", "3"], "total-delta"),
    (["--total-eps", "2", "--total-delta", "1e-5", "--queries", "0"], "queries"),
    (["--total-eps", "2", "--total-delta", "1e-5", "--queries", "3", "--m", "2"], "m"),
    (["--total-eps", "2", "--total-delta", "1e-5", "--queries", "3", "--delta", "1e-4"], "delta"),
    (["--total-eps", "2", "--total-delta", "1e-5", "--queries", "3", "--family", "sub"], "family"),
    (["--total-eps", "2", "--total-delta", "1e-5", "--queries", "3", "--method", "full"], "method"),
])
def test_cli_refuses_bad_budget_options_in_one_line_writing_nothing(cli, tmp_path, argv, name):
    out = tmp_path / "b.json"
    rc, stdout, err = cli("solve", "--K", "5", *argv, "--out", str(out))
    assert rc == 2 and not out.exists() and stdout == ""
    assert len(err.strip().splitlines()) == 1 and name in err


def test_budget_file_round_trips_and_verify_rechecks_the_composition(cli, tmp_path, design5,
                                                                     cli_designs_through_design5):
    out = tmp_path / "b.json"
    rc, stdout, _ = cli("solve", "--K", "5", "--eps", "0.3", "--member-delta", "1e-4", "--total-eps", "1.5",
                        "--total-delta", "1e-3", "--queries", "3", "--out", str(out), "--json")
    assert rc == 0
    assert len(cli_designs_through_design5) == 1  # the CLI asked the designer for design5's problem, once
    rec = json.loads(stdout)
    assert np.array_equal(np.array(rec["gamma"]), design5.table.gamma)
    assert rec["family"] == "budget" and rec["total_budget"]["epsilon_total"] == 1.5
    assert rec["total_budget"]["epsilon_total_composed"] <= 1.5 and rec["total_budget"]["queries"] == 3
    t = darrm.load(out)
    assert t.info["total_budget"]["composed_epsilon"] == rec["total_budget"]["epsilon_total_composed"]
    assert np.array_equal(t.gamma, np.array(rec["gamma"]))
    rc, stdout, _ = cli("verify", str(out))
    assert rc == 0 and "total budget" in stdout
    # an edited budget with a recomputed checksum: the composition re-check fails
    d = json.loads(out.read_text())
    d["info"]["total_budget"]["epsilon"] = 0.5 * rec["total_budget"]["epsilon_total_composed"]
    d["checksum"] = checksum(d)
    bad = tmp_path / "edited.json"
    bad.write_text(json.dumps(d))
    with pytest.raises(GammaFileError, match="total budget"):
        darrm.load(bad)
    rc, _, err = cli("verify", str(bad))
    assert rc == 2 and "total budget" in err
    # an edited composed ε (the budget still met) is caught too
    d["info"]["total_budget"]["epsilon"] = 1.5
    d["info"]["total_budget"]["composed_epsilon"] = 0.1
    d["checksum"] = checksum(d)
    bad.write_text(json.dumps(d))
    with pytest.raises(darrm.CertificationError, match="differs"):  # the accountant's re-check (darrm verify)
        darrm.verify_charged_total(darrm.load(bad))


@pytest.mark.parametrize(("field", "value", "names"), [("queries", 10**9, "total_budget.queries: the first")])
def test_a_resealed_total_budget_cannot_make_verify_run_away(cli, tmp_path, design5, field, value, names):
    """The queries' prefixes 1, 2, 4, … are composed first (ε(δ) grows with the count, so a prefix past
    ε_total refuses the record).  A K = 3 table re-sealed with Q = 10⁹ ran over 200 s.  Any designed
    table shows it (the module's one design, written as ``darrm solve --total-eps`` writes it)."""
    import time

    out = tmp_path / "b.json"
    darrm.save(design5.table, out)
    d = json.loads(out.read_text())
    d["info"]["total_budget"][field] = value
    d["checksum"] = checksum(d)
    bad = tmp_path / "forged.json"
    bad.write_text(json.dumps(d))
    t0 = time.monotonic()  # the accountant's charge of the count: `darrm verify` (the core cannot compose)
    rc, _, err = cli("verify", str(bad))
    assert rc == 2 and err.count("\n") == 1 and names in err
    assert time.monotonic() - t0 < 10


def test_every_door_charges_a_designed_shared_table_the_same_total(design5, cli, tmp_path):
    """One accountant: for a designed table of members on shared data with Δ > 0 and its Q, the
    designer's recorded total, the labelling session, ``darrm account queries``, the API and
    ``darrm verify`` give one number, bit for bit, and the session answers exactly the Q queries the
    table was designed for."""
    from darrm.accounting import LabellingSession

    t, Q, dt = design5.table, BUDGET5.queries, BUDGET5.delta
    recorded = t.info["total_budget"]["composed_epsilon"]
    assert t.params.member_delta > 0 and recorded <= BUDGET5.epsilon
    api = darrm.accounting.composed_epsilon(t, Q, delta_total=dt, member_randomness="fresh").epsilon
    session = LabellingSession(t, member_randomness="fresh", budget_epsilon=BUDGET5.epsilon, delta=dt, rng=0)
    assert session.remaining_queries() == Q
    session.label(np.ones((Q, t.K), dtype=int))
    path = tmp_path / "b.json"
    darrm.save(t, path)
    rc, out, _ = cli("account", "queries", str(path), "--queries", str(Q), "--delta-total", str(dt),
                     "--member-randomness", "fresh", "--json")
    assert rc == 0
    door = json.loads(out)["epsilon_total"]
    assert recorded == api == session.epsilon_spent == door == darrm.verify_charged_total(darrm.load(path))
    assert session.remaining_queries() == 0
