"""Where the exhaustive sweeps run: executors (this process, local processes, a Dask
cluster, joblib's active backend, any ``concurrent.futures`` pool) and array devices (numpy,
torch on CPU/GPU)."""

from .adapters import FuturesExecutor, JoblibExecutor
from .devices import TorchDevice
from .executors import (
    DaskExecutor,
    Executor,
    ProcessExecutor,
    SerialExecutor,
    make_executor,
)

__all__ = ["DaskExecutor", "Executor", "FuturesExecutor", "JoblibExecutor", "ProcessExecutor", "SerialExecutor",
           "TorchDevice", "make_executor"]
