"""γ designed for a total privacy budget over Q queries: what the core keeps.

:mod:`.spec` (:class:`TotalBudget`), :mod:`.targets` (target profile families whose Q-fold
composition meets a total, and their grid rows), :mod:`.cloud` (the worst configurations of a
disjoint-members query), :mod:`.design` (the result types), :mod:`.request` (what a budget request
cannot use) and :mod:`.verify` (the record's own consistency).  The designs, which compose tables
over queries, are the accountant's: :mod:`darrm.accounting.budget`.
"""
