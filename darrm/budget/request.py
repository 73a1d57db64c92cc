"""What a total-budget request (``darrm solve --total-eps …``) cannot use is refused, named."""

from __future__ import annotations

from pathlib import Path

from ..backends.executors import SerialExecutor
from ..errors import ParameterError
from ..models import model_of
from ..solver.options import SolveOptions
from ..validation import instance
from .spec import TotalBudget

_WHY = "a total-budget design searches its own families and certifies by composition"


def check_budget_request(params: object, budget: object, family: str, opts: SolveOptions, executor: object,
                         checkpoint: Path | None) -> TotalBudget:
    """The budget, after refusing (naming them) a member model without the total-budget capability, a family
    other than "opt", a checkpoint, an executor other than the serial one and any non-default solve option.

    Raises:
        ParameterError: naming the refused argument."""
    b = instance("budget", budget, TotalBudget, "a darrm.TotalBudget")
    model_of(params).require("total-budget", "budget")
    if family != "opt":
        raise ParameterError("family", f"must be 'opt' with a budget ({_WHY}); got {family!r}")
    if checkpoint is not None:
        raise ParameterError("checkpoint", f"does not apply with a budget ({_WHY})")
    if executor is not None and not isinstance(executor, SerialExecutor):
        raise ParameterError("executor", f"does not apply with a budget ({_WHY}, in this process)")
    default = SolveOptions()
    ignored = next((n for n in SolveOptions.field_names() if getattr(opts, n) != getattr(default, n)), None)
    if ignored is not None:
        raise ParameterError(ignored, f"does not apply with a budget ({_WHY})")
    return b
