from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets"


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    if not (SHARED / "mnist" / "train-labels-idx1-ubyte.gz").is_file():
        pytest.skip("shared/datasets not present next to the repository")
    return SHARED.resolve()
