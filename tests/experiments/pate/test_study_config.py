"""The study's settings are validated on construction; a ParameterError names the bad field."""

from __future__ import annotations

import pytest

from darrm import ParameterError
from darrm.experiments.pate.study import StudyConfig
from darrm.experiments.pate.teachers import TeacherConfig


@pytest.mark.parametrize("field,value", [("dataset", "cifar"), ("ms", (0,)), ("ms", (12,)), ("ms", ()),
                                         ("queries", (0,)), ("queries", ()), ("draws", 0),
                                         ("delta_prime", 0.0), ("delta_prime", 1.0), ("epochs", 0)])
def test_study_config_names_the_bad_field(field, value):
    kw = {"dataset": "mnist", field: value}
    with pytest.raises(ParameterError, match=field):
        StudyConfig(**kw)


@pytest.mark.parametrize("field,value", [("K", 10), ("K", 0), ("epochs", 0), ("batch_size", 0), ("lr", 0.0),
                                         ("lr", float("inf")), ("momentum", 1.0), ("noise_multiplier", 0.0),
                                         ("max_grad_norm", -1.0), ("delta", 0.0), ("n_classes", 1),
                                         ("accountant", "pld"), ("accountant", "gdp")])
def test_teacher_config_names_the_bad_field(field, value):
    with pytest.raises(ParameterError, match=field):
        TeacherConfig(private=True, **{field: value})


def test_good_settings_pass_and_integral_allowances_become_ints():
    cfg = StudyConfig("mnist", ms=(1.0, 3))
    assert cfg.ms == (1, 3) and cfg.teacher_config(False).private is False
