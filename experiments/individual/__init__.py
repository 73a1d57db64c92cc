"""Individualized PATE's setting for DaRRM: records with their own budgets.

``darrm-experiments individual`` trains non-private teachers on MNIST's two-class task whose
training records fall into budget groups (ε = 1 / 2 / 3 for 34 / 43 / 23 % of the records,
Boenisch et al., PoPETs 2023), and compares the labels released by

* DaRRM designed for each group's total budget (:func:`darrm.design_for_budget` with one total per
  group), on the upsampled teachers and on the weighting teachers;
* DaRRM with per-group targets, records of group g copied into r_g teachers' shards
  (:class:`darrm.ShardGroupParams`), and DaRRM with every record at the worst budget (disjoint
  shards, :class:`darrm.DisjointParams`);
* GNMax with Individualized PATE's two variants, upsampling (the same copies, one σ meeting every
  group's budget) and weighting (teachers of one group each, votes weighted), and GNMax at the
  worst budget;

plus the shared-data simulation (members with their own budgets, :mod:`darrm.models.groups`)
at several splits.  Teachers are trained by :func:`darrm.experiments.pate.student.train_student`
and GNMax is :mod:`darrm.experiments.pate.multiclass_aggregators`'s: nothing is reimplemented.
"""
