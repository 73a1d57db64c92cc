"""``--executor torch`` without a GPU says that torch on the CPU is the slow path (docs/solving.md)."""

from __future__ import annotations

import logging

import pytest

from darrm.backends.executors import make_executor


def test_torch_executor_on_the_cpu_warns_that_it_is_for_a_gpu(caplog):
    torch = pytest.importorskip("torch")
    with caplog.at_level(logging.WARNING, logger="darrm"):
        dev = make_executor("torch:cpu")
    assert dev.device.type == "cpu"
    assert any("torch is for a CUDA device" in r.getMessage() for r in caplog.records)
    if torch.cuda.is_available():  # on a GPU machine the CUDA device says nothing
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="darrm"):
            make_executor("torch:cuda")
        assert not caplog.records
