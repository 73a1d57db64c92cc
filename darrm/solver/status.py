"""Re-export of :mod:`darrm.status` (the status types live beside :mod:`darrm.table`)."""

from ..status import GAP_BOUNDED, OPTIMAL, SolveReport, StopReason, status_for

__all__ = ["GAP_BOUNDED", "OPTIMAL", "SolveReport", "StopReason", "status_for"]
