"""The published PATE anchors' own settings, charged by darrm's data-independent accountants.

PATE 2017 and PATE 2018 report *data-dependent* ε (moments accountant / smooth-sensitivity RDP,
functions of the private vote histograms) for their MNIST students.  darrm's ten-class tables are
calibrated *data-independently* (the total holds for every data set).  To compare like with like,
each anchor's published parameters are run here through darrm's own accountants:

Claim 1 (PATE 2017, LNMax; Papernot et al. 2017, Section 3 and Table 2: γ = 0.05, Q = 100 on MNIST,
published ε = 2.04 at δ = 1e-5, student 98.0 %).  LNMax releases argmax(n + Lap(1/γ)^C).  Changing
one training record changes one teacher's vote: two counts move by 1, so each noisy count's density
ratio is ≤ e^γ and the released argmax is (2γ, 0)-DP per query (report-noisy-max on the pair of
moved counts; the bound PATE 2017 states).  Q adaptive (2γ, 0)-DP queries are (ε, δ)-DP for the
exact optimal homogeneous composition (Kairouz, Oh & Viswanath 2015, Theorem 3.3):
:func:`darrm.accounting.optimal_homogeneous_epsilon` (0.1, 0, 100, 1e-5) = 4.31.

Claim 2 (PATE 2018, Confident-GNMax; Papernot et al. 2018, Table 1: T = 200, σ1 = 150, σ2 = 40 on
MNIST, 640 queries of which 286 answered, published ε = 1.97 at δ = 1e-5, student 98.5 %).  Every
query runs the threshold check, answered or not, and whether it is answered depends on the private
votes; the data-independent total therefore charges all 640 queries (the check and a GNMax answer
for each, Claim 2 of :mod:`.multiclass_aggregators`): one Gaussian of
μ² = 640·(1/σ1² + 2/σ2²), ε = 3.93.  Charging only the 286 answered queries would be a
data-dependent count, not a data-independent bound.

The published ε are one noisy draw each (the data-dependent ε of one run of the mechanism on one
data set; PATE 2018's is released with smooth sensitivity, :mod:`.smooth_sensitivity`), not
bounds that hold for every data set.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from darrm.accounting import optimal_homogeneous_epsilon
from darrm.experiments.pate.multiclass_aggregators import confident_total_epsilon
from darrm.validation import open_unit

__all__ = ["ANCHOR_DELTA", "Anchor", "anchors"]

#: the δ both anchors report
ANCHOR_DELTA = 1e-5


@dataclass(frozen=True)
class Anchor:
    """One published MNIST student, its settings and both kinds of ε.

    Attributes:
        name: the paper and aggregator.
        settings: the published noise parameters.
        queries: queries the aggregator ran (each one is charged).
        answered: queries answered (labels the student got).
        epsilon_published: the paper's data-dependent ε (one noisy draw, not a bound for all data).
        epsilon_data_independent: darrm's data-independent total for the same settings.
        delta: the δ of both.
        student_accuracy: the paper's student accuracy on the MNIST test set.
        accountant: how ``epsilon_data_independent`` was computed.
    """

    name: str
    settings: str
    queries: int
    answered: int
    epsilon_published: float
    epsilon_data_independent: float
    delta: float
    student_accuracy: float
    accountant: str

    def as_dict(self) -> dict:
        return asdict(self)


def anchors(delta: float = ANCHOR_DELTA) -> tuple[Anchor, ...]:
    """PATE 2017 (LNMax) and PATE 2018 (Confident-GNMax) on MNIST with darrm's data-independent totals.

    Args:
        delta: the total δ (the anchors report 1e-5).

    Returns:
        The two :class:`Anchor` rows (Claims 1 and 2 of this module).

    Raises:
        ParameterError: ``delta`` outside (0, 1).
    """
    delta = open_unit("delta", delta)
    gamma, q17 = 0.05, 100
    s1, s2, q18 = 150.0, 40.0, 640
    return (
        Anchor("PATE 2017, LNMax", f"γ = {gamma} (Laplace scale 1/γ per count)", q17, q17, 2.04,
               optimal_homogeneous_epsilon(2 * gamma, 0.0, q17, delta), delta, 0.980,
               "exact optimal composition of Q pure (2γ)-DP queries (Kairouz-Oh-Viswanath Thm 3.3)"),
        Anchor("PATE 2018, Confident-GNMax", f"T = 200 of 250, σ1 = {s1:g}, σ2 = {s2:g}", q18, 286, 1.97,
               confident_total_epsilon(s1, s2, delta, q18), delta, 0.985,
               "every query charged: Q x (threshold Gaussian σ1 + GNMax σ2) = one Gaussian (PLD)"),
    )
