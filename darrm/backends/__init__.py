"""Where the exhaustive sweeps run: executors (this process, local processes, a Dask
cluster) and array devices (numpy, torch on CPU/GPU)."""

from .devices import TorchDevice
from .executors import (
    DaskExecutor,
    Executor,
    ProcessExecutor,
    SerialExecutor,
    make_executor,
)

__all__ = ["DaskExecutor", "Executor", "ProcessExecutor", "SerialExecutor", "TorchDevice", "make_executor"]
