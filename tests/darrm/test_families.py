"""The γ-family registry (darrm/families.py): every family honours its contract, and a family
added in that one file reaches the CLI, the JSON vocabulary, the docs and GammaTable.

The contract is checked independently of the solver's certificate: a brute force over every
assignment of the (ε, Δ)-DP polygon's vertices to the K = 5 members (written out here, not taken
from darrm.privacy.corners) evaluates Algorithm 1's output law and both DP inequalities, both
outputs, both directions, in float64 (sums of ≤ 6 products of ≤ 5 probabilities: rounding
≤ 1e-15, so the stated slack 1e-12 cannot hide a real violation, which is ≥ 1e-6 for a broken γ).
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest

import darrm
from darrm import api, cli, families
from darrm.json_vocabulary import vocabulary

SLACK = 1e-12


def polygon(eps: float, Delta: float) -> list[tuple[float, float]]:
    """Vertices (p, p′) of {(p, p′): p ≤ e^ε p′ + Δ, 1−p ≤ e^ε(1−p′) + Δ, and symmetric}."""
    e = math.exp(eps)
    hi, lo = (e + Delta) / (e + 1), (1 - Delta) / (e + 1)
    pts = [(0.0, 0.0), (1.0, 1.0), (hi, lo), (lo, hi)]
    if Delta > 0:
        pts += [(0.0, Delta), (Delta, 0.0), (1 - Delta, 1.0), (1.0, 1 - Delta)]
    return pts


def pb_pmf(ps) -> np.ndarray:
    out = np.array([1.0])
    for p in ps:
        out = np.convolve(out, [1 - p, p])
    return out


def brute_violation(gamma: np.ndarray, params: darrm.PrivacyParams) -> float:
    """max over corner assignments, outputs and directions of Pr[A(D)=o] − e^{mε}Pr[A(D′)=o] − δ."""
    K = params.K
    mid = (K + 1) // 2
    w1 = np.where(np.arange(K + 1) >= mid, gamma, 0.0) + (1 - gamma) / 2  # Pr[A = 1 | L = l]
    e = math.exp(params.m * params.eps)
    worst = -np.inf
    for assign in itertools.product(polygon(params.eps, params.member_delta), repeat=K):
        a, ap = pb_pmf([c[0] for c in assign]), pb_pmf([c[1] for c in assign])
        for w in (w1, 1 - w1):
            P, Pp = float(a @ w), float(ap @ w)
            worst = max(worst, P - e * Pp - params.delta, Pp - e * P - params.delta)
    return worst


PARAMS = [darrm.PrivacyParams(K=5, m=2, eps=0.3, member_delta=0.0, delta=0.0),
          darrm.PrivacyParams(K=5, m=3, eps=0.2, member_delta=1e-3)]


@pytest.mark.parametrize("params", PARAMS, ids=["pure", "approx"])
@pytest.mark.parametrize("name", families.names())
def test_every_family_is_certified_symmetric_within_unit_interval_and_private_by_brute_force(name, params):
    fam = families.get(name)
    if not fam.applies_to(params):
        pytest.skip(f"{name} does not apply to {params}")
    t = darrm.solve(params, family=name, progress=False)
    g = t.gamma
    assert t.family == name and g.shape == (params.K + 1,)
    assert np.all((g >= 0) & (g <= 1)) and np.array_equal(g, g[::-1])
    assert darrm.certify(g, params).certified
    assert brute_violation(g, params) <= SLACK


def test_the_brute_force_catches_a_non_private_gamma():
    """The check itself: γ ≡ 1 (the plain majority) is not (mε, δ)-DP at K = 5, m = 2."""
    assert brute_violation(np.ones(6), PARAMS[0]) > 1e-3


@pytest.fixture
def half_rr():
    """A family registered the way a contributor adds one: a closed form and one register call."""
    def closed_form(params):
        return 0.5 * darrm.gamma_const(params)

    fam = families.register(families.Family("halfrr", "half of γ_const (a test family)", "Lemma A.1, halved",
                                             options=(), closed_form=closed_form))
    yield fam
    del families.REGISTRY[fam.name]


def test_a_family_registered_in_one_place_reaches_cli_docs_vocabulary_and_tables(half_rr, capsys):
    import importlib.util
    from pathlib import Path

    # the CLI: accepted by --family, solved and certified
    assert cli.main(["--no-progress", "solve", "--K", "5", "--family", "halfrr", "--json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert doc["family"] == "halfrr" and doc["certified"]
    # the JSON vocabulary (evaluate keys its curves by family)
    assert "halfrr" in vocabulary()
    # the docs: the hook that writes the table of families
    hook = Path(__file__).resolve().parents[2] / "docs" / "hooks" / "families_table.py"
    spec = importlib.util.spec_from_file_location("families_table", hook)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    page = mod.on_page_markdown(f"before\n{mod.MARKER}\nafter", page=None, config=None, files=None)
    assert re.search(r"^\| `halfrr` \| half of γ_const", page, re.M) and mod.MARKER not in page
    # tables and the request check
    darrm.GammaTable(PARAMS[0], np.full(6, 0.1), "halfrr", 0.0)
    api.check_request(PARAMS[0], family="halfrr")


def test_the_registry_refuses_a_second_family_of_one_name_and_unknown_names():
    with pytest.raises(darrm.ParameterError, match="^name: .*already registered"):
        families.register(families.Family("sub", "again", "Lemma 3.1"))
    with pytest.raises(darrm.ParameterError, match="^family: must be one of opt, sub"):
        families.get("nope")
    with pytest.raises(darrm.ParameterError, match="^name:"):
        families.Family("custom", "a hand-made table is not a family", "")


def test_the_other_lists_of_family_names_are_derived_from_the_registry():
    assert darrm.FAMILIES == families.names()
    assert families.table_names() == (*families.names(), "custom", "budget")
    assert set(families.names()) <= vocabulary()


def test_a_family_option_it_does_not_take_is_refused():
    with pytest.raises(darrm.ParameterError, match="^tau: is no option of the sub family"):
        darrm.family_gamma("sub", PARAMS[0], tau=2.0)
    with pytest.raises(darrm.ParameterError,
                       match="^family: must be one of sub, dsub, const, threshold for a closed form"):
        darrm.family_gamma("opt", PARAMS[0])
