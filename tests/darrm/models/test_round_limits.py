"""The constraint-generation round limit is a fact of each member model, and every list of them is derived
from the registry."""

from __future__ import annotations

import pytest

import darrm
from darrm.models import MEMBER_MODELS, round_limits
from darrm.solver.options import SolveOptions


def test_every_registered_model_declares_its_round_limit_and_the_registry_lists_it():
    assert set(round_limits()) == set(MEMBER_MODELS)
    for name, model in MEMBER_MODELS.items():
        assert isinstance(model.max_rounds, int) and model.max_rounds >= 1, name
        assert round_limits()[name] == type(model).max_rounds


def test_a_round_limit_left_unset_is_the_models_and_a_set_one_wins():
    assert SolveOptions().rounds(7) == 7
    assert SolveOptions(max_rounds=3).rounds(7) == 3


@pytest.mark.parametrize("name", ["disjoint", "shard-groups", "weighted-shards", "groups"])
def test_the_models_loop_stops_at_the_limit_it_is_given(name):
    """One round allowed: the solve stops at the round limit (accepted with its gap) rather than running on."""
    model = MEMBER_MODELS[name]
    params = model.example()
    table = darrm.solve(params, options=SolveOptions(method="cutting-planes", max_rounds=1, accept_gap=True))
    assert table.info["rounds"] == 1
