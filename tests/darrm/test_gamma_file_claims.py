"""A valid checksum proves integrity, not truth: a γ file's recorded objective and prior are checked on load."""

import json

import pytest

from darrm import gamma_file
from darrm.errors import GammaFileError
from darrm.params import PrivacyParams
from darrm.prior import BetaPrior, DensityPrior, IndependentPrior, PaperMCPrior, prior_from_dict
from darrm.solver.gamma_opt import solve_gamma_opt


@pytest.fixture(scope="module")
def table():
    return solve_gamma_opt(PrivacyParams(11, 3, 0.1, 1e-5))


def _saved_with(table, tmp_path, **changes):
    path = tmp_path / "g.json"
    gamma_file.save(table, path)
    d = json.loads(path.read_text())
    d.update(changes)
    d["checksum"] = gamma_file.checksum(d)  # a consistent forgery: the checksum alone cannot catch it
    path.write_text(json.dumps(d))
    return path


def test_a_recorded_objective_that_is_not_the_expected_error_is_refused(table, tmp_path):
    path = _saved_with(table, tmp_path, objective=table.objective / 2)
    with pytest.raises(GammaFileError, match="objective.*expected error under its prior"):
        gamma_file.load(path)


def test_an_objective_recorded_under_another_prior_is_refused(table, tmp_path):
    path = _saved_with(table, tmp_path, prior={"kind": "iid", "mean": 0.9})
    with pytest.raises(GammaFileError, match="objective"):
        gamma_file.load(path)


@pytest.mark.parametrize("prior, needle", [
    ({"kind": "made-up", "mean": 0.75}, "unknown prior kind"),
    ({"kind": "iid", "mean": 0.75, "extra": 1}, "not a iid prior"),
    ({"kind": "iid", "mean": 1.5}, "prior.mean"),
    ([0.75], "prior"),
])
def test_a_prior_that_is_no_registered_priors_description_is_refused(table, tmp_path, prior, needle):
    path = _saved_with(table, tmp_path, prior=prior)
    with pytest.raises(GammaFileError, match=needle):
        gamma_file.load(path)


def test_an_objective_without_a_prior_is_refused(table, tmp_path):
    path = _saved_with(table, tmp_path, prior=None)
    with pytest.raises(GammaFileError, match="objective.*without a prior"):
        gamma_file.load(path)


def test_the_true_objective_and_a_table_without_claims_load(table, tmp_path):
    assert gamma_file.load(_saved_with(table, tmp_path)).objective == table.objective
    back = gamma_file.load(_saved_with(table, tmp_path, prior=None, objective=None))
    assert back.objective is None and back.prior is None


@pytest.mark.parametrize("prior", [BetaPrior(3, 1), IndependentPrior(tuple([0.6] * 5 + [0.8] * 6)),
                                   PaperMCPrior(T=50)])
def test_every_rebuildable_prior_round_trips_through_its_description(table, tmp_path, prior):
    assert prior_from_dict(prior.to_dict()) == prior
    solved = solve_gamma_opt(PrivacyParams(11, 3, 0.1, 1e-5), prior=prior)
    path = tmp_path / "p.json"
    gamma_file.save(solved, path)
    assert gamma_file.load(path).objective == solved.objective


def test_a_density_prior_cannot_be_rebuilt_and_its_objective_is_kept(tmp_path):
    solved = solve_gamma_opt(PrivacyParams(7, 3, 0.1, 1e-5), prior=DensityPrior.example())
    path = tmp_path / "d.json"
    gamma_file.save(solved, path)
    assert gamma_file.load(path).objective == solved.objective
    with pytest.raises(Exception, match="density is code"):
        prior_from_dict(solved.prior)


def test_a_density_priors_objective_is_marked_unverified_wherever_it_is_printed(tmp_path, capsys):
    """The recorded objective of a density prior cannot be recomputed (the density is code): a forged
    one (any number) still loads, so every place that prints it says it is unverified — the table's
    verify text, the JSON record — while a rebuilt prior's objective is marked verified."""
    from darrm.cli import main

    solved = solve_gamma_opt(PrivacyParams(7, 3, 0.1, 1e-5), prior=DensityPrior.example())
    assert gamma_file.objective_verified(solved) is True  # computed here
    path = _saved_with(solved, tmp_path, objective=0.123456)
    loaded = gamma_file.load(path)
    assert loaded.objective == 0.123456 and gamma_file.objective_verified(loaded) is False
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert "expected error under it: 0.123456 (unverified: a density prior is code" in out
    assert main(["verify", str(path), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["expected_error"] == 0.123456 and rec["expected_error_verified"] is False
    iid = tmp_path / "iid.json"
    gamma_file.save(solve_gamma_opt(PrivacyParams(7, 3, 0.1, 1e-5)), iid)
    assert main(["verify", str(iid), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["expected_error_verified"] is True
    assert main(["verify", str(iid)]) == 0
    assert "unverified" not in capsys.readouterr().out


def _grouped_params(kind):
    import darrm

    if kind == "groups":
        return darrm.GroupParams(((2, 0.2, 1e-4), (3, 0.6, 1e-4)), 0.8, 1e-3, "per-group")
    groups = [darrm.BudgetGroup(3, 0.3, 1e-5), darrm.BudgetGroup(4, 0.6, 1e-5)]
    return darrm.WeightedShardParams(darrm.NonPrivate(), groups, weights=(1, 2) if kind == "weighted" else None)


@pytest.mark.parametrize("kind", ["groups", "weighted-shards", "weighted"])
def test_every_member_models_objective_is_checked_by_its_own_expected_error(tmp_path, kind):
    """The load-time check asks the table's member model (darrm.models.base.MemberModel.expected_error): a
    per-group table's true error loads, half of it is refused, and the γ(0..K) formula would not even
    read its table (so the check cannot have used it)."""
    import numpy as np

    import darrm
    from darrm.errors import ParameterError
    from darrm.models import MEMBER_MODELS, model_of
    from darrm.models.groups.per_group import joint_expected_error
    from darrm.solver.objective import expected_signed_error

    params = _grouped_params(kind)
    solved = darrm.solve(params, darrm.IIDPrior(0.75))
    assert model_of(params).expected_error(solved.gamma, params, darrm.IIDPrior(0.75)) == \
        joint_expected_error(solved.gamma, params, darrm.IIDPrior(0.75))
    assert gamma_file.load(_saved_with(solved, tmp_path)).objective == solved.objective
    with pytest.raises(GammaFileError, match="objective.*expected error under its prior"):
        gamma_file.load(_saved_with(solved, tmp_path, objective=solved.objective / 2))
    with pytest.raises(ParameterError):
        expected_signed_error(np.asarray(solved.gamma), darrm.IIDPrior(0.75))
    assert all(callable(m.expected_error) for m in MEMBER_MODELS.values())
