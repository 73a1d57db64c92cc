"""The independent re-check of a recorded total budget (:mod:`references.budget_check`) as the session
fixture ``budget_check`` of the total-budget designers' tests."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from references.budget_check import check_gdp_total, check_record, composed_pair


@pytest.fixture(scope="session")
def budget_check():
    return SimpleNamespace(check_record=check_record, composed_pair=composed_pair, check_gdp_total=check_gdp_total)
