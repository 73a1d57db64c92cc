"""Inputs that used to be truncated silently by zip(): table rows and paper-mc prior specs."""

from __future__ import annotations

import pytest

from darrm.errors import ParameterError
from darrm.prior import PaperMCPrior, parse_prior
from darrm.report import format_table


def test_format_table_refuses_a_row_longer_than_the_header():
    with pytest.raises(ParameterError) as info:
        format_table(["a", "b"], [[1.0, 2.0, 3.0]])  # used to drop the third cell
    assert info.value.parameter == "rows"


def test_format_table_refuses_a_row_shorter_than_the_header():
    with pytest.raises(ParameterError) as info:
        format_table(["a", "b"], [[1.0]])
    assert info.value.parameter == "rows"


def test_format_table_still_formats_well_formed_rows():
    assert format_table(["a", "b"], [[1.0, "x"]]).splitlines() == ["     a  b", "------  -", "1.0000  x"]


def test_paper_mc_prior_refuses_a_fifth_parameter():
    with pytest.raises(ParameterError) as info:
        parse_prior("paper-mc:0.5,10,100,1,7")  # used to ignore the 7
    assert info.value.parameter == "prior"


def test_paper_mc_prior_keeps_defaults_for_missing_trailing_parameters():
    p = parse_prior("paper-mc:0.6,5")
    default = PaperMCPrior()
    assert isinstance(p, PaperMCPrior) and (p.p_lower, p.tau, p.T, p.seed) == (0.6, 5, default.T, default.seed)
