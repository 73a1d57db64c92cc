"""GroupParams: validation naming the parameter, the γ-file round trip, and the issue's reference setting."""

from __future__ import annotations

import pytest

import darrm
from darrm.models.groups.params import GroupParams, MemberGroup, parse_groups


@pytest.mark.parametrize("groups,eps,delta,name", [
    (((2, 0.1, 0.0), (2, 0.3, 0.0)), 0.5, 0.0, "groups"),          # K = 4 is even
    ((), 0.5, 0.0, "groups"),
    (((3, -0.1, 0.0),), 0.5, 0.0, "groups"),                      # eps ≤ 0
    (((3, 0.1, 1.0),), 0.5, 0.0, "groups"),                       # Δ ∉ [0, 1)
    (((0, 0.1, 0.0), (3, 0.1, 0.0)), 0.5, 0.0, "groups"),         # an empty group
    (((3, 0.1, 1e-3),), 0.5, 1e-4, "target_delta"),               # δ below a member's Δ
    (((3, 0.1, 0.0),), 0.0, 0.0, "target_eps"),
    (((3, 0.1, 0.0),), 0.5, 1.0, "target_delta"),
    (("3:0.1:0",), 0.5, 0.0, "groups"),
])
def test_bad_parameters_are_refused_naming_the_parameter(groups, eps, delta, name):
    with pytest.raises(darrm.ParameterError) as info:
        GroupParams(groups, eps, delta)
    assert info.value.parameter == name


@pytest.mark.parametrize("text", ["", "5:0.1", "5:0.1:1e-5:3", "x:0.1:0", "5:0.1:1e-5,", "2.5:0.1:0", "5:-1:0"])
def test_malformed_group_lists_are_refused(text):
    with pytest.raises(darrm.ParameterError) as info:
        parse_groups(text)
    assert info.value.parameter == "groups"


def test_group_lists_parse_and_count_configurations():
    gs = parse_groups("5:0.1:1e-5, 6:0.3:0")
    assert gs == (MemberGroup(5, 0.1, 1e-5), MemberGroup(6, 0.3, 0.0))
    p = GroupParams(gs, 0.5, 1e-4)
    assert p.K == 11 and p.configurations == 792 * 84  # C(12, 7)·C(9, 3)
    assert GroupParams.from_file_fields(p.file_fields()) == p
    with pytest.raises(darrm.ParameterError, match="K"):
        GroupParams.from_file_fields({**p.file_fields(), "K": 13})


def test_the_issues_reference_setting():
    """K = 11: 5 members at (0.1, 1e-5) and 6 at (0.3, 1e-5), target (0.5, 1e-4), prior i.i.d. 0.75:
    the issue measured 0.128 with every member at the worst budget and 0.100 with group corners."""
    prior = darrm.IIDPrior(0.75)
    grouped = darrm.solve(GroupParams(((5, 0.1, 1e-5), (6, 0.3, 1e-5)), 0.5, 1e-4), prior)
    worst = darrm.solve(darrm.PrivacyParams(K=11, m=0.5 / 0.3, eps=0.3, member_delta=1e-5, delta=1e-4), prior)
    assert grouped.status == worst.status == "optimal"
    assert round(worst.objective, 3) == 0.128 and round(grouped.objective, 3) == 0.100
