"""Array devices for the exhaustive sweep: where its gathers and comparisons run.

An executor (:mod:`darrm.backends.executors`) decides *where* blocks of a sweep run
(this process, local processes, a Dask cluster); a device decides *with which array
library*.  :class:`TorchDevice` runs the sweep's block functions with torch in float64 on
CUDA when present (the tables are built on the CPU exactly as for numpy and moved; they are
small: C(K+5,5) or K³/3 floats).  Results equal the numpy path to float64 rounding (tested
on the CPU device); float64 torch kernels are conventional (no TF32), so the certificate's
forward-error bound (:mod:`darrm.privacy.condition`) holds on the GPU too.
"""

from __future__ import annotations

import numpy as np

from ..errors import ParameterError, require


def _torch():
    return require("torch", "experiments", "the torch backend")


def default_device() -> str:
    """"cuda" when torch sees a GPU, else "cpu"."""
    torch = _torch()
    return "cuda" if torch.cuda.is_available() else "cpu"


class TorchDevice:
    """Run sweeps with torch on ``device`` (default: CUDA when present, else CPU)."""

    def __init__(self, device: str | None = None, *, parameter: str = "executor"):
        """``parameter``: the option named in errors (the CLI's --executor, the PATE study's --device)."""
        torch = _torch()
        name = device or default_device()
        try:
            self.device = torch.device(name)
        except (RuntimeError, TypeError):
            raise ParameterError(parameter, f"unknown torch device {name!r}; use cpu, cuda or cuda:N") from None
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise ParameterError(parameter, f"torch device {name!r} requested but torch sees no CUDA device")
        self.xp = torch

    def put(self, a: np.ndarray):
        """``a`` as a torch tensor on the device (a view of ``a`` where torch allows one: a
        read-only array, such as a cached table, is copied, which torch needs to write safely)."""
        arr = np.ascontiguousarray(a)
        if not arr.flags.writeable:
            arr = arr.copy()
        return self.xp.from_numpy(arr).to(self.device)
