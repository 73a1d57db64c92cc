"""The member-model contract: every registered model runs end to end.

For each registered name: its example parameters → ``darrm.solve`` → an independent re-run of the
certificate → a γ file saved and loaded (re-certified) → labels → the exact privacy profile (its
ε at the table's per-query δ never above the certified per-query ε) → a ``LabellingSession`` with
fresh and with fixed members (or a refusal naming the model and the capability) →
``darrm solve --members NAME --json`` (the same γ, bit for bit) → ``darrm account queries``; and for
every model with the ``total-budget`` capability its one registered designer: design → verify → the
session charging the recorded total (a model without it is refused, naming the model and the capability).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import darrm
from darrm.accounting import LabellingSession
from darrm.cli import main
from darrm.errors import ParameterError
from darrm.models import CAPABILITIES, MEMBER_MODELS, MemberModel, model_for_format, model_of
from darrm.models.profile import privacy_profile

NAMES = tuple(MEMBER_MODELS)
BUDGETED = tuple(n for n in NAMES if MEMBER_MODELS[n].supports("total-budget"))
#: a total over two queries in which every model's design is found quickly
BUDGET = darrm.TotalBudget(3.5, 1e-3, 2)
#: the groups example's design takes a minute of exact spectra; this smaller group problem composes
#: its two queries the same way (one record per group, each re-certified) in a second
SMALL_GROUPS = ((1, 0.2, 1e-4), (2, 0.6, 1e-4))
BUDGET_PARAMS = {"groups": darrm.GroupParams(SMALL_GROUPS, 0.8, 1e-3)}


def _budget_params(name: str):
    """The parameters a model's total-budget design is tested on (its example, or a smaller problem)."""
    return BUDGET_PARAMS[name] if name in BUDGET_PARAMS else MEMBER_MODELS[name].example()


@pytest.fixture(scope="module")
def tables() -> dict[str, darrm.GammaTable]:
    return {name: darrm.solve(MEMBER_MODELS[name].example()) for name in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_model_declares_what_it_is(name):
    model = MEMBER_MODELS[name]
    params = model.example()
    assert model.name == name == params.members
    assert model_of(params) is model and type(params) is model.params_type
    assert model_for_format(model.gamma_format) is model
    assert model.capabilities <= set(CAPABILITIES)


@pytest.mark.parametrize("name", NAMES)
def test_solved_table_is_certified_by_a_fresh_certificate(name, tables):
    table = tables[name]
    assert table.params.members == name
    darrm.api._cache.clear()  # a fresh run of the certificate, not the memoised verdict of the solve
    cert = darrm.certify(table.gamma, table.params)
    assert cert.certified and cert.violation <= 0.0


@pytest.mark.parametrize("name", NAMES)
def test_saved_table_loads_bit_for_bit(name, tables, tmp_path):
    table = tables[name]
    darrm.save(table, tmp_path / "g.json")
    back = darrm.load(tmp_path / "g.json")
    assert back.params == table.params
    assert np.array_equal(back.gamma, table.gamma)


@pytest.mark.parametrize("name", NAMES)
def test_aggregate_releases_one_bit_per_query(name, tables):
    table = tables[name]
    votes = np.random.default_rng(0).integers(0, 2, size=(7, table.K))
    labels = darrm.aggregate(votes, table, rng=1)
    assert labels.shape == (7,) and set(np.unique(labels)) <= {0, 1}


@pytest.mark.parametrize("name", NAMES)
def test_profile_never_exceeds_the_certified_query_budget(name, tables):
    table = tables[name]
    prof = privacy_profile(table)
    eps_q, delta_q = table.params.query_budget
    # the certificate proves (ε_q, δ_q) for every record; the exact profile is the tight curve below it
    assert prof.delta(eps_q) <= delta_q
    assert prof.model == name


@pytest.mark.parametrize("name", NAMES)
def test_fresh_session_charges_what_it_labels(name, tables):
    table = tables[name]
    s = LabellingSession(table, member_randomness="fresh", budget_epsilon=50.0, delta=1e-2)
    s.label(np.ones((2, table.K), dtype=int))
    assert s.queries == 2 and 0.0 < s.epsilon_spent < 50.0


@pytest.mark.parametrize("name", NAMES)
def test_fixed_session_is_post_processing_of_the_members(name, tables):
    table = tables[name]
    s = LabellingSession(table, member_randomness="fixed", budget_epsilon=50.0, delta=1e-2)
    before = s.epsilon_for(1)
    s.label(np.ones((3, table.K), dtype=int))
    assert s.queries == 3
    assert s.epsilon_spent == before  # any number of queries: the members' own bound, not a composition


@pytest.mark.parametrize("name", NAMES)
def test_cli_solve_members_gives_the_library_table(name, tables, capsys):
    assert main(["solve", "--members", name, *MEMBER_MODELS[name].cli_example, "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["members"] == name
    assert np.array_equal(np.asarray(rec["gamma"]), tables[name].gamma)


@pytest.mark.parametrize("name", NAMES)
def test_account_queries_composes_the_saved_table(name, tables, tmp_path, capsys):
    path = tmp_path / "g.json"
    darrm.save(tables[name], path)
    assert main(["account", "queries", str(path), "--queries", "4", "--delta-total", "1e-2",
                 "--member-randomness", "fresh", "--json"]) == 0
    out = capsys.readouterr().out
    assert "epsilon" in out and "inf" not in out.lower().replace("infinite", "")


def test_fixed_local_rr_members_are_refused_naming_the_option():
    with pytest.raises(ParameterError) as e:
        LabellingSession(darrm.solve(darrm.DisjointParams(5, darrm.LocalRR(1.0), 0.6, 1e-4)),
                         member_randomness="fixed", budget_epsilon=5.0, delta=1e-2)
    assert "member_randomness" in str(e.value)


def test_a_missing_capability_is_refused_naming_model_and_capability():
    class NoProfile(type(MEMBER_MODELS["shared"])):  # an unregistered model without the capabilities
        capabilities = frozenset({"cli"})

        def exposures(self, params):
            return MemberModel.exposures(self, params)

    model = NoProfile()
    assert not model.supports("profile") and model.supports("cli")
    with pytest.raises(ParameterError) as e:
        model.require("profile", "params")
    assert e.value.parameter == "params" and "shared" in str(e.value) and "'profile'" in str(e.value)
    with pytest.raises(ParameterError, match="member_randomness"):
        model.exposures(model.example())
    with pytest.raises(ParameterError, match="capability"):
        model.supports("teleport")


def test_the_registry_refuses_a_second_model_of_one_name_or_type():
    from darrm.models import register

    with pytest.raises(ParameterError, match="name 'shared'"):
        register(type(MEMBER_MODELS["shared"])())
    with pytest.raises(ParameterError, match="MemberModel"):
        register("shared")  # type: ignore[arg-type]
    assert tuple(MEMBER_MODELS) == ("shared", "disjoint", "groups", "shard-groups", "weighted-shards")


def test_the_docs_table_of_models_is_written_from_the_registry():
    import importlib.util
    from pathlib import Path

    hook = Path(__file__).resolve().parents[3] / "docs" / "hooks" / "models_table.py"
    spec = importlib.util.spec_from_file_location("models_table", hook)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    page = mod.on_page_markdown(f"before\n{mod.MARKER}\nafter", page=None, config=None, files=None)
    assert mod.MARKER not in page
    for m in MEMBER_MODELS.values():
        assert f"| `{m.name}` | `{m.params_type.__name__}` | `{m.gamma_format}` |" in page


def test_every_model_with_the_total_budget_capability_has_exactly_one_designer():
    from darrm.accounting.budget import DESIGNERS

    assert set(DESIGNERS) == set(BUDGETED) and "shared" in BUDGETED


@pytest.mark.parametrize("name", BUDGETED)
def test_total_budget_design_is_verified_and_charged_its_record_by_the_session(name):
    t = darrm.design_for_budget(_budget_params(name), BUDGET).table
    if "group_budgets" in t.info:  # groups owed their own totals: each re-certified, the largest returned
        charged = [g["composed_epsilon"] for g in t.info["group_budgets"]["groups"]]
        assert t.params.members == name and darrm.certify(t.gamma, t.params).certified
        assert darrm.verify_charged_total(t) == pytest.approx(max(charged), rel=1e-9) and max(charged) <= BUDGET.epsilon
        return
    recorded = t.info["total_budget"]["composed_epsilon"]
    assert t.params.members == name and darrm.certify(t.gamma, t.params).certified
    assert darrm.verify_charged_total(t) == recorded <= BUDGET.epsilon
    s = LabellingSession(t, member_randomness="fresh", budget_epsilon=BUDGET.epsilon, delta=BUDGET.delta, rng=0)
    s.label(np.ones((BUDGET.queries, t.K), dtype=int))
    assert s.epsilon_spent == recorded


@pytest.mark.parametrize("name", [n for n in NAMES if n not in BUDGETED])
def test_a_model_without_the_total_budget_capability_is_refused_naming_it(name, capsys):
    with pytest.raises(ParameterError) as e:
        darrm.design_for_budget(MEMBER_MODELS[name].example(), BUDGET)
    assert e.value.parameter == "params" and name in str(e.value) and "'total-budget'" in str(e.value)
    argv = ["solve", "--members", name, *MEMBER_MODELS[name].cli_example, "--total-eps", "3.5", "--total-delta",
            "1e-3", "--queries", "2"]
    assert main(argv) == 2
    assert "total" in capsys.readouterr().err


@pytest.mark.parametrize("name", [n for n in BUDGETED if "total_eps" not in MEMBER_MODELS[n].cli_options])
def test_a_model_whose_groups_own_their_totals_refuses_one_cli_total_naming_it(name, capsys):
    argv = ["solve", "--members", name, *MEMBER_MODELS[name].cli_example, "--total-eps", "3.5", "--total-delta",
            "1e-3", "--queries", "2"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "total-eps" in err and name in err and len(err.strip().splitlines()) == 1


def test_grouped_members_design_a_total_budget_from_the_cli(tmp_path, capsys):
    out = tmp_path / "g.json"
    argv = ["solve", "--members", "groups", *MEMBER_MODELS["groups"].cli_example, "--total-eps", "3.5",
            "--total-delta", "1e-3", "--queries", "2", "--out", str(out)]
    argv[argv.index("--groups") + 1] = ",".join(f"{n}:{e:g}:{d:g}" for n, e, d in SMALL_GROUPS)
    for n, _ in MEMBER_MODELS["groups"].budget_replaces:  # the budget replaces the per-query target
        flag = "--" + n.replace("_", "-")
        if flag in argv:
            i = argv.index(flag)
            del argv[i:i + 2]
    assert main(argv) == 0, capsys.readouterr().err
    assert main(["verify", str(out)]) == 0
    assert "total budget" in capsys.readouterr().out
    # the command line designs what the library designs, bit for bit
    library = darrm.design_for_budget(BUDGET_PARAMS["groups"], BUDGET).table
    assert darrm.load(out).gamma.tolist() == library.gamma.tolist()
