"""The registry of shuffle bounds (accounting/shuffle/best.py:METHODS): a bound registered in that
one place reaches ``all_bounds``, ``best_upper_bound``, ``darrm shuffle`` (table and ``--json``,
whose keys stay in the JSON vocabulary) and the docs' table of methods; names are unique.

The test bound is the trivial one, ε = ε0 with δ = 0 for any ε0-LDP randomizer (changing one
user's input changes one local report, and the shuffled multiset is post-processing of the
reports): valid, and never better than the real bounds at n ≥ 1000.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from darrm import cli
from darrm.accounting import GenericLDP, all_bounds, best_upper_bound
from darrm.accounting.shuffle import best
from darrm.accounting.shuffle.bound import Bound
from darrm.errors import ParameterError
from darrm.json_vocabulary import vocabulary

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def trivial():
    def eps_bound(r, n, delta):
        return Bound("trivial-eps0", "upper", True, r.eps0, delta, "post-processing of the local reports")

    def delta_bound(r, n, eps):
        return Bound("trivial-eps0", "upper", True, eps, 0.0 if eps >= r.eps0 else 1.0, "post-processing")

    m = best.register(best.Method("trivial-eps0", "upper", eps_bound, delta_bound, lambda r: None,
                                  "any ε0-LDP", "no amplification at all (a test bound)"))
    yield m
    best.METHODS.remove(m)


def _hook():
    spec = importlib.util.spec_from_file_location("shuffle_methods_table",
                                                  ROOT / "docs" / "hooks" / "shuffle_methods_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_bound_registered_in_one_place_reaches_api_cli_json_and_docs(trivial, capsys):
    r = GenericLDP(1.0)
    names = [b.method for b in all_bounds(r, 2000, delta=1e-6)]
    assert "trivial-eps0" in names
    assert best_upper_bound(r, 2000, delta=1e-6).method != "trivial-eps0"  # valid but never the best
    # the CLI table and its JSON records
    assert cli.main(["--no-progress", "shuffle", "--n", "2000", "--eps0", "1", "--delta", "1e-6"]) == 0
    assert "trivial-eps0" in capsys.readouterr().out
    assert cli.main(["--no-progress", "shuffle", "--n", "2000", "--eps0", "1", "--delta", "1e-6", "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    (mine,) = [rec for rec in recs if rec["method"] == "trivial-eps0"]
    assert mine["epsilon"] == 1.0 and mine["valid"] is True
    assert set().union(*recs) <= vocabulary()
    # the docs' table of methods
    hook = _hook()
    page = hook.on_page_markdown(f"before\n{hook.MARKER}\nafter", page=None, config=None, files=None)
    assert "| `trivial-eps0` | upper | any ε0-LDP | no amplification at all (a test bound) |" in page
    assert hook.MARKER not in page


def test_the_docs_table_lists_every_registered_method_and_the_page_has_the_marker():
    page = _hook().methods_markdown()
    for m in best.METHODS:
        assert f"| `{m.name}` | {m.kind} |" in page and m.randomizers and m.notes
    assert _hook().MARKER in (ROOT / "docs" / "shuffle.md").read_text(encoding="utf-8")


def test_the_registry_refuses_a_second_bound_of_one_name_and_an_unknown_kind():
    clones = next(m for m in best.METHODS if m.name == "clones")
    with pytest.raises(ParameterError, match="^name: .*already registered"):
        best.register(clones)
    with pytest.raises(ParameterError, match="^kind:"):
        best.register(clones._replace(name="sideways", kind="sideways"))
    assert all(m.name != "sideways" for m in best.METHODS)
