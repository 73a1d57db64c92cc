"""darrm.accounting.gnmax: GNMax (Papernot et al. 2018) — σ calibration and ε of Q queries
(:mod:`.calibration`), the data-dependent RDP bound (:mod:`.data_dependent`), and Confident-GNMax
(:mod:`.confident`)."""

from .calibration import (
    COARSE_ORDERS,
    METHODS,
    SENSITIVITY_L2,
    GridCalibration,
    calibrate_sigma,
    compare_methods,
    epsilon,
    gaussian_delta,
    gaussian_rdp,
    paper_grid,
    rdp_orders,
    rdp_to_dp_classical,
)
from .confident import (
    ConfidentGNMaxAccount,
    confident_gnmax_epsilon,
    confident_gnmax_rdp,
    log_pr_answered,
)
from .data_dependent import (
    DataDependentRDP,
    applies_anywhere,
    data_dependent_rdp,
    log_q,
    rdp_from_log_q,
)

__all__ = [
    "COARSE_ORDERS",
    "METHODS",
    "ConfidentGNMaxAccount",
    "SENSITIVITY_L2",
    "DataDependentRDP",
    "GridCalibration",
    "applies_anywhere",
    "calibrate_sigma",
    "compare_methods",
    "confident_gnmax_epsilon",
    "confident_gnmax_rdp",
    "data_dependent_rdp",
    "epsilon",
    "gaussian_delta",
    "gaussian_rdp",
    "log_pr_answered",
    "log_q",
    "paper_grid",
    "rdp_to_dp_classical",
    "rdp_from_log_q",
    "rdp_orders",
]
