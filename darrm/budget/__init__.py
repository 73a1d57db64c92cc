"""γ designed for a total privacy budget over Q queries.

:mod:`.spec` (:class:`TotalBudget`), :mod:`.targets` (target profile families whose Q-fold
composition meets a total), :mod:`.compose` (the exact composition every result is certified by),
:mod:`.design` (the search over target families and the per-query baselines).
"""
