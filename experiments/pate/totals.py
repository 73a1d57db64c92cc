"""Total (ε, δ) of Q released labels, per aggregator, with the tightest accounting that is *valid*.

Which composition applies depends on where the randomness of a query comes from.

Claim 1 (fixed DP-SGD teachers: parallel composition).  The K private teachers are trained once,
each on its own disjoint shard with DP-SGD that is (ε_t, Δ)-DP.  Changing one training record
changes the training data of exactly one teacher, so the tuple of trained teachers is
(ε_t, Δ)-DP (parallel composition).  Every label released from their votes — DaRRM with any γ,
the plain majority — for any number Q of queries is a function of the trained teachers and of
randomness independent of the data, i.e. post-processing, so the Q labels together are
(ε_t, Δ)-DP.  Proof: post-processing (Dwork & Roth 2014, Proposition 2.1).

Claim 2 (per-query composition needs fresh member randomness).  DaRRM's (mε, δ) guarantee per
query (DaRRM paper Lemma 3.4) treats each teacher's vote as an (ε, Δ)-DP mechanism run *for that
query*.  Sequential composition over Q queries (Kairouz, Oh & Viswanath 2015, Theorem 3.3) needs
the Q runs to use independent randomness; fixed trained teachers reuse their training randomness
for every query, so the composed bound is **not** a valid guarantee for them.  It is reported
only as ``epsilon_total_fresh_members`` (valid if each query were answered by freshly trained
teachers), labelled with its accountant: the tight one of the γ table's exact dominating pair
(:func:`darrm.accounting.composed_epsilon` with ``member_randomness="fresh"``) when the
table is given, else the generic bound (the exact optimal composition of Q homogeneous (mε, δ)
mechanisms, Kairouz, Oh & Viswanath 2015, Theorem 3.3).

Claim 3 (GNMax on non-private teachers).  The teachers are deterministic functions of the data;
each answer adds fresh Gaussian noise N(0, σ²) to every count of the histogram (ℓ2 sensitivity √2),
so Q answers are Q adaptive Gaussian mechanisms, whose composition is exactly one Gaussian
mechanism of sensitivity √(2Q) (composition of Gaussian DP, Dong, Roth & Su 2022; the analytic
Gaussian curve of Balle & Wang 2018): ``darrm.accounting.gnmax_epsilon(σ, δ, Q, "pld")``, the tightest
possible for these releases.

Every total is reported at ``delta_total`` = the teachers' Δ so that rows compare at one δ.
"""

from __future__ import annotations

from darrm.accounting import composed_epsilon, gnmax_epsilon, optimal_homogeneous_epsilon
from darrm.errors import ParameterError
from darrm.table import GammaTable

__all__ = ["ACCOUNTANTS", "total_budget"]

#: the accountant named in each record, by kind of release
ACCOUNTANTS = {
    "parallel": "parallel composition of the fixed DP-SGD teachers + post-processing (valid for any Q)",
    "gaussian-pld": "exact composition of Q Gaussian mechanisms (sensitivity sqrt(2), analytic Gaussian)",
    "none": "none: teachers trained without DP (non-private ceiling)",
    "generic-fresh": "GENERIC bound: exact optimal composition of Q (m*eps, delta) queries (Kairouz-Oh-Viswanath "
                     "Thm 3.3); valid only with fresh member randomness per query, NOT for fixed teachers",
    "tight-fresh": "TIGHT bound: PLD of the gamma table's exact dominating pair composed over Q queries "
                   "(darrm.accounting.composed_epsilon, member_randomness='fresh', upper side of its "
                   "discretisation bracket); valid only with fresh member randomness per query, NOT for fixed teachers",
}


def total_budget(kind: str, ensemble: str, Q: int, mech_m: dict, eps_teacher: float, member_delta: float,
                 delta_fresh: float, sigma: float | None = None, table: GammaTable | None = None) -> dict:
    """The record fields ``epsilon_total``, ``delta_total``, ``accountant`` (and the fresh-member bound).

    Args:
        kind: the release (``"darrm"``, ``"majority"``, ``"gnmax"``).
        ensemble: ``"private"`` (DP-SGD teachers) or ``"nonprivate"``.
        Q: number of released labels.
        mech_m: the per-m mechanism dict (``eps_query``, ``delta_query``).
        eps_teacher: the DP-SGD teachers' ε (max over teachers).
        member_delta: the teachers' Δ; every ``delta_total`` is this.
        delta_fresh: total δ of the generic fresh-member bound (≥ 1 − (1 − δ_query)^Q).
        sigma: GNMax noise (required for ``kind == "gnmax"``).
        table: the certified γ table of a DaRRM row: its fresh-member bound is then the tight one.

    Returns:
        A dict of record fields (Claims 1–3 of this module).

    Raises:
        ParameterError: ``kind == "gnmax"`` without ``sigma``.
    """
    if ensemble == "private":
        rec: dict = {"epsilon_total": float(eps_teacher), "delta_total": float(member_delta),
                     "accountant": ACCOUNTANTS["parallel"]}
        if kind == "darrm":
            if table is not None:
                bound = composed_epsilon(table, Q, delta_total=delta_fresh, member_randomness="fresh")
                fresh, name = bound.epsilon, ACCOUNTANTS["tight-fresh"]
            else:
                fresh = optimal_homogeneous_epsilon(mech_m["eps_query"], mech_m["delta_query"], Q, delta_fresh)
                name = ACCOUNTANTS["generic-fresh"]
            rec.update(epsilon_total_fresh_members=float(fresh), delta_total_fresh_members=float(delta_fresh),
                       accountant_fresh_members=name)
        return rec
    if kind == "gnmax":
        if sigma is None:
            raise ParameterError("sigma", "is required for a GNMax total")
        return {"epsilon_total": float(gnmax_epsilon(sigma, member_delta, Q, "pld")),
                "delta_total": float(member_delta), "accountant": ACCOUNTANTS["gaussian-pld"]}
    return {"epsilon_total": None, "delta_total": None, "accountant": ACCOUNTANTS["none"]}
