"""Which pairs of data sets a guarantee is about: one enum for every layer of darrm.

* ``EVERY_MEMBER_SEES_RECORD`` — the paper's Problem 1.1 (:class:`darrm.PrivacyParams`);
* ``ONE_MEMBER_CHANGES`` — members on disjoint shards (:class:`darrm.DisjointParams`);
* ``RECORD_COPIES_CHANGE`` — records of group g copied into r_g shards (:class:`darrm.ShardGroupParams`);
* ``ADD_OR_REMOVE_ONE`` — DP-SGD (:mod:`darrm.accounting.dpsgd`, Opacus and dp_accounting's
  Poisson-sampled accountants);
* ``REPLACE_ONE`` — shuffling (:mod:`darrm.accounting.shuffle`) and shuffled votes
  (:mod:`darrm.accounting.votes`): one user's (member's) input is replaced by another.

Composition theorems and GNMax hold for whatever relation their inputs' (ε, δ) were stated under.
"""

from __future__ import annotations

from enum import Enum


class NeighboringRelation(str, Enum):
    """Which pairs of data sets D, D′ a guarantee is about (explicit on every parameter object).

    The last two are dp_accounting's ``NeighboringRelation`` names, used where the concept is
    theirs; :attr:`dp_accounting` gives dp_accounting's own member for its accountants.
    """

    #: one record changes and every member may depend on it (the paper's Problem 1.1)
    EVERY_MEMBER_SEES_RECORD = "every-member-sees-record"
    #: one record changes and only the member whose disjoint shard holds it may depend on it
    ONE_MEMBER_CHANGES = "one-member-changes"
    #: one record of group g changes and only the r_g members whose shards hold a copy of it may
    #: depend on it (Individualized PATE's upsampling; :mod:`darrm.models.shard_groups`)
    RECORD_COPIES_CHANGE = "record-copies-change"
    #: one record is added or removed (DP-SGD accounting of each teacher, Opacus)
    ADD_OR_REMOVE_ONE = "add-or-remove-one"
    #: one record is replaced (privacy amplification by shuffling)
    REPLACE_ONE = "replace-one"

    @property
    def dp_accounting(self):
        """The same relation as a ``dp_accounting.NeighboringRelation`` (ADD_OR_REMOVE_ONE and
        REPLACE_ONE; the two DaRRM relations have no counterpart there: ValueError)."""
        import dp_accounting

        try:
            return dp_accounting.NeighboringRelation[self.name]
        except KeyError:
            raise ValueError(f"{self.name} has no dp_accounting counterpart") from None
