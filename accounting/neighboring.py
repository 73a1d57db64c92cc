"""The neighbouring relations darrm.accounting accounts under, named as in dp_accounting.

* ``ADD_OR_REMOVE_ONE`` — DP-SGD (:mod:`darrm.accounting.dpsgd`, Opacus and dp_accounting's
  Poisson-sampled accountants);
* ``REPLACE_ONE`` — shuffling (:mod:`darrm.accounting.shuffle`) and shuffled votes
  (:mod:`darrm.accounting.votes`): one user's (member's) input is replaced by another.

Composition theorems (:mod:`darrm.accounting.composition`) and GNMax hold for whatever
relation their inputs' (ε, δ) were stated under.
"""

from __future__ import annotations

import enum


class NeighboringRelation(enum.Enum):
    """Which data sets are neighbours: the names (and values) of ``dp_accounting.NeighboringRelation``.

    :attr:`dp_accounting` gives dp_accounting's own member, for its accountants."""

    ADD_OR_REMOVE_ONE = 1
    REPLACE_ONE = 2
    REPLACE_SPECIAL = 3

    @property
    def dp_accounting(self):
        """The same relation as a ``dp_accounting.NeighboringRelation``."""
        import dp_accounting

        return dp_accounting.NeighboringRelation[self.name]


__all__ = ["NeighboringRelation"]
