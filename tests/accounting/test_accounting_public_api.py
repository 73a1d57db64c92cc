"""darrm.accounting's facade: its names are pinned, each resolves and is documented."""

import ast
import importlib
import pathlib

import pytest

import darrm.accounting

EXPECTED = ['Bound', 'DPSGDRun', 'FiniteRandomizer', 'GenericLDP', 'LabellingSession', 'NeighboringRelation',
            'PrivacyBudgetExceeded', 'QueryAccountant', 'QueryBound', 'RandomizedResponse',
            'ShuffledBinaryRR', 'advanced_dwork_roth', 'all_bounds', 'best_upper_bound', 'calibrate_sigma',
            'composed_delta', 'composed_epsilon', 'confident_gnmax_epsilon',
            'data_dependent_rdp', 'dpsgd_epsilon', 'gnmax_epsilon', 'heterogeneous_pld', 'kairouz_general',
            'largest_eps0', 'noise_multiplier_for', 'optimal_homogeneous_delta', 'optimal_homogeneous_epsilon',
            'paper_tables', 'parallel', 'query_pld', 'record_group_bounds', 'shuffled_votes_guarantee', 'simple',
            'teacher_majority_budget', 'tight_total_epsilon']


def test_all_is_pinned():
    assert sorted(darrm.accounting.__all__) == EXPECTED


def test_every_name_resolves_and_has_a_docstring():
    for name in darrm.accounting.__all__:
        obj = getattr(darrm.accounting, name)
        assert (obj.__doc__ or "").strip(), name


def test_neighboring_relations_are_explicit():
    from darrm.accounting import dpsgd, votes
    from darrm.accounting.shuffle import NEIGHBORING_RELATION

    NR = darrm.accounting.NeighboringRelation
    assert darrm.accounting.DPSGDRun(1.0, 0.1, 10, 1e-5).neighboring_relation is NR.ADD_OR_REMOVE_ONE
    assert dpsgd.NEIGHBORING_RELATION is NR.ADD_OR_REMOVE_ONE
    assert NEIGHBORING_RELATION is NR.REPLACE_ONE and votes.NEIGHBORING_RELATION is NR.REPLACE_ONE
    assert darrm.accounting.ShuffledBinaryRR(5, 1.0).neighboring_relation is NR.REPLACE_ONE


ROOT = pathlib.Path(darrm.accounting.__file__).parent


def _imports(path: pathlib.Path) -> set[str]:
    """Modules imported anywhere in a file (inside functions too), absolute dotted names."""
    pkg = "darrm.accounting." + ".".join(path.relative_to(ROOT).with_suffix("").parts)
    if path.name == "__init__.py":
        pkg = pkg.rsplit(".", 1)[0] + ".__init__"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: -node.level]
                mod = ".".join(base + ([node.module] if node.module else []))
                out.add(mod)
                out |= {f"{mod}.{a.name}" for a in node.names}
            else:
                out.add(node.module)
                out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


def test_layering_accounting_never_imports_experiments_and_votes_have_no_cycle():
    for path in ROOT.rglob("*.py"):
        mods = _imports(path)
        assert not any(m.startswith(("darrm.experiments", "experiments")) for m in mods), path
    # the one-round module knows nothing of Q rounds or the PLD
    one = _imports(ROOT / "votes" / "one_round.py")
    assert not any(m.startswith(("darrm.accounting.votes.rounds", "darrm.accounting.votes.pld")) for m in one)
    pld = _imports(ROOT / "votes" / "pld.py")
    assert not any(m.startswith("darrm.accounting.votes.rounds") for m in pld)


def test_command_modules_are_importable():
    for mod in ("account", "shuffle", "votes"):
        assert hasattr(importlib.import_module(f"darrm.accounting.cli.{mod}"), "register")


def test_neighboring_relation_maps_to_dp_accounting():
    import dp_accounting

    NR = darrm.accounting.NeighboringRelation
    assert NR is darrm.NeighboringRelation  # one enum for every layer
    for r in (NR.ADD_OR_REMOVE_ONE, NR.REPLACE_ONE):
        assert r.dp_accounting is dp_accounting.NeighboringRelation[r.name]
    for r in (NR.EVERY_MEMBER_SEES_RECORD, NR.ONE_MEMBER_CHANGES):
        with pytest.raises(ValueError, match="no dp_accounting counterpart"):
            _ = r.dp_accounting
