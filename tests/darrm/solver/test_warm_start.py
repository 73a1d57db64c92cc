"""Warm starts (issue 27): a nearby solve's multisets as the first cuts change the rounds, never the
answer.  The reference answer is the full LP over every corner multiset (method "full"), and the
privacy of every warm-started table is checked by the direct certificate (one Poisson-binomial pmf
per multiset, both outputs, both directions: ``certify_reference``), not by the solver's sweep."""

import numpy as np
import pytest

import darrm
import darrm.api
from darrm import SolveOptions, WarmStart
from darrm.errors import ParameterError
from darrm.params import PrivacyParams
from darrm.privacy.certify import certify_reference
from darrm.solver.checkpoint import save_checkpoint
from darrm.solver.gamma_opt import solve_gamma_opt
from darrm.solver.warm_start import convert_corners, rescale_counts

CP = {"method": "cutting-planes"}


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A solve at K = 13, m = 3, ε = 0.1, Δ = 1e-5 that leaves its working set in a checkpoint."""
    ck = tmp_path_factory.mktemp("warm") / "source.npz"
    t = solve_gamma_opt(PrivacyParams(13, 3, 0.1, 1e-5), checkpoint=str(ck), options=SolveOptions(**CP))
    return t, ck


def full_lp(P):
    return solve_gamma_opt(P, options=SolveOptions(method="full"))


def assert_same_answer_and_private(t, P):
    assert t.status == "optimal" and t.params == P
    assert t.objective == pytest.approx(full_lp(P).objective, abs=1e-9)
    assert certify_reference(t.gamma, P).violation <= 0.0


@pytest.mark.parametrize("target", [PrivacyParams(13, 3, 0.12, 1e-5), PrivacyParams(13, 4, 0.1, 1e-5),
                                    PrivacyParams(15, 3, 0.1, 1e-5), PrivacyParams(11, 3, 0.1, 2e-5),
                                    PrivacyParams(13, 3, 0.1, 0.0)])
def test_a_warm_start_from_a_nearby_problem_gives_the_full_lp_optimum_and_a_private_table(source, target):
    """Other ε, m, K (± 2), Δ, and Δ = 0 (8 corners merged into 4): the full LP's optimum to 1e-9, a
    table the direct certificate proves private, and the warm rows really were the first cuts."""
    warm = WarmStart.from_checkpoint(source[1])
    t = solve_gamma_opt(target, options=SolveOptions(**CP, warm_start=warm))
    assert_same_answer_and_private(t, target)
    assert t.info["warm_start"]["rows"] > 0 and t.info["warm_start"]["source"] == "checkpoint source.npz"


def test_a_warm_start_from_nearby_eps_takes_fewer_rounds(source):
    """The point of it (the solve is deterministic): at ε 0.1 → 0.12 fewer rounds than cold."""
    P = PrivacyParams(13, 3, 0.12, 1e-5)
    cold = solve_gamma_opt(P, options=SolveOptions(**CP))
    warm = solve_gamma_opt(P, options=SolveOptions(**CP, warm_start=WarmStart.from_checkpoint(source[1])))
    assert warm.info["rounds"] < cold.info["rounds"]
    assert warm.objective == pytest.approx(cold.objective, abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_garbage_warm_start_still_gives_the_right_answer(seed):
    """Random multisets of another K over the other corner count, nothing to do with the optimum:
    rows of the full LP all the same, so the answer is the full LP's and the table private."""
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(23, np.ones(4) / 4, size=40)  # K = 23, Δ = 0 corners, for K = 13, Δ > 0
    P = PrivacyParams(13, 3, 0.1, 1e-5)
    t = solve_gamma_opt(P, options=SolveOptions(**CP, warm_start=WarmStart(counts, source="garbage")))
    assert_same_answer_and_private(t, P)
    assert t.info["warm_start"] == {"source": "garbage", "rows": t.info["warm_start"]["rows"]}


def test_a_warm_start_from_a_table_finds_its_binding_multisets(source):
    """from_table: the table's near-binding multisets (one sweep of its own problem) violate by
    at most 0 and by more than −NEAR_BINDING there, by the direct pmfs; then a warm solve."""
    from darrm.privacy.certify import certify_reference_counts
    from darrm.privacy.corners import corners

    t0 = source[0]
    w = WarmStart.from_table(t0)
    assert w.K == 13 and w.source == "table opt K=13"
    P0 = t0.params
    cs = corners(P0.eps, P0.member_delta)
    for v in w.multisets:
        viol = certify_reference_counts(t0.gamma, P0, v[None, :], cs)[0]
        assert -1e-6 < viol <= 0.0
    P = PrivacyParams(13, 3, 0.12, 1e-5)
    assert_same_answer_and_private(solve_gamma_opt(P, options=SolveOptions(**CP, warm_start=w)), P)


def test_rescaled_counts_sum_to_the_new_k_and_keep_the_shape():
    c = np.array([[3, 0, 1, 0, 0, 0, 10, 1], [15, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 8]])
    for K in (1, 13, 15, 17, 101):
        r = rescale_counts(c, K)
        assert r.dtype == np.int64 and r.min() >= 0 and np.all(r.sum(axis=1) == K)
        assert np.all(np.abs(r - c * K / 15) < 1.0)  # within one of the exact scaling, each corner
    assert np.array_equal(rescale_counts(c, 15), c)
    assert rescale_counts(np.array([[1, 1, 0, 0]]), 3).tolist() == [[2, 1, 0, 0]]  # tie: lower index first


def test_corner_conversion_merges_to_the_delta_zero_corners_and_embeds_back():
    c8 = np.array([[1, 2, 3, 4, 5, 6, 7, 8]])
    assert convert_corners(c8, 4).tolist() == [[1 + 3 + 4, 2 + 5 + 6, 7, 8]]
    assert convert_corners(np.array([[1, 2, 3, 4]]), 8).tolist() == [[1, 2, 0, 0, 0, 0, 3, 4]]
    assert convert_corners(c8, 8) is not None and convert_corners(c8, 8).tolist() == c8.tolist()


@pytest.mark.parametrize("bad", [np.ones((2, 8)), np.ones((2, 5), dtype=int), np.zeros((0, 8), dtype=int),
                                 np.array([[1, 0, 0, 0], [2, 0, 0, 0]]), np.array([[-1, 2, 0, 0]]),
                                 np.zeros((1, 4), dtype=int), [[1, 0, 0, 0]], np.ones(8, dtype=int)])
def test_bad_multisets_are_refused_naming_warm_start(bad):
    with pytest.raises(ParameterError, match="^warm_start: "):
        WarmStart(bad)


def test_solve_options_refuse_a_warm_start_that_is_not_one():
    with pytest.raises(ParameterError, match="^warm_start: must be a darrm.WarmStart"):
        SolveOptions(warm_start="source.npz")


def test_unreadable_warm_start_files_are_refused_naming_warm_start(tmp_path):
    missing, junk, empty = tmp_path / "missing.npz", tmp_path / "junk.npz", tmp_path / "empty.npz"
    junk.write_bytes(b"not a zip")
    save_checkpoint(empty, "0" * 16, np.zeros((0, 8), dtype=np.int64))
    for f, why in ((missing, "no such file"), (junk, "unreadable checkpoint"), (tmp_path, "not a regular file"),
                   (empty, "holds no multiset")):
        with pytest.raises(ParameterError, match=f"^warm_start: .*{why}"):
            WarmStart.from_checkpoint(f)


def test_a_warm_start_is_refused_where_no_constraint_generation_runs(source):
    """The full LP, a closed-form family, a total budget, disjoint and grouped members would drop
    it: refused before any work, named."""
    from darrm.models.groups.params import GroupParams, parse_groups

    w = WarmStart.from_checkpoint(source[1])
    P = PrivacyParams(11, 3, 0.1, 1e-5)
    opts = SolveOptions(warm_start=w)
    requests = [(P, {"options": SolveOptions(method="full", warm_start=w)}),
                (PrivacyParams(41, 3, 0.1, 1e-5), {"family": "sub", "options": opts}),
                (P, {"options": opts, "budget": darrm.TotalBudget(1.0, 1e-5, 10)}),
                (darrm.DisjointParams(11, darrm.NonPrivate(), 0.5, 0.0), {"options": opts}),
                (GroupParams(parse_groups("5:0.1:1e-5,6:0.3:1e-5"), 0.5, 1e-4), {"options": opts})]
    for params, kw in requests:
        with pytest.raises(ParameterError, match="^warm_start: "):
            darrm.api.check_request(params, **kw)
    with pytest.raises(ParameterError, match="^warm_start: "):
        darrm.solve(P, options=SolveOptions(method="full", warm_start=w))


def test_cli_warm_start_from_a_checkpoint_gives_the_cold_table(cli, source, tmp_path):
    """``darrm solve --warm-start CHECKPOINT``: the table of the cold solve (γ to 1e-9), certified."""
    import json

    base = ["--no-progress", "solve", "--K", "13", "--m", "3", "--eps", "0.12", "--member-delta", "1e-5",
            "--method", "cutting-planes", "--json"]
    rc, out, _ = cli(*base, "--warm-start", str(source[1]))
    rc0, out0, _ = cli(*base)
    assert rc == rc0 == 0
    warm, cold = json.loads(out), json.loads(out0)
    assert warm["certified"] and warm["status"] == "optimal" and warm["violation"] <= 0.0
    assert np.allclose(warm["gamma"], cold["gamma"], atol=1e-9, rtol=0)


def test_cli_bad_warm_start_is_one_line_naming_it_and_writes_nothing(cli, source, tmp_path):
    out = tmp_path / "g.json"
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"PK\x03\x04junk")
    cases = [("--K", "13", "--method", "cutting-planes", "--warm-start", str(tmp_path / "missing.npz")),
             ("--K", "13", "--method", "cutting-planes", "--warm-start", str(junk)),
             ("--K", "13", "--method", "full", "--warm-start", str(source[1])),
             ("--K", "13", "--family", "sub", "--warm-start", str(source[1])),
             ("--K", "13", "--members", "disjoint", "--member-privacy", "rr:1", "--target-eps", "1",
              "--warm-start", str(source[1]))]
    for args in cases:
        rc, _, err = cli("--no-progress", "solve", *args, "--out", str(out))
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert rc == 2 and len(lines) == 1 and lines[0].startswith("darrm: error: warm-start: "), (args, err)
        assert not out.exists()


def test_from_table_refuses_other_members_and_bad_arguments(source):
    disjoint = darrm.solve(darrm.DisjointParams(11, darrm.NonPrivate(), 0.5, 0.0))
    with pytest.raises(ParameterError, match="^warm_start: must be a shared-members table"):
        WarmStart.from_table(disjoint)
    with pytest.raises(ParameterError, match="^near: "):
        WarmStart.from_table(source[0], near=0.0)
    with pytest.raises(ParameterError, match="^top: "):
        WarmStart.from_table(source[0], top=0)
