"""``--randomizer SPEC``: the grammar, what each spec builds, and the command line's handling."""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from darrm.accounting import GenericLDP, RandomizedResponse
from darrm.accounting.cli.shuffle import register
from darrm.accounting.shuffle import hadamard_response, oue, poisson_subsampled, rappor
from darrm.accounting.shuffle.best import all_bounds, bound_records
from darrm.accounting.shuffle.calibration import central_epsilon, eps0_for_target
from darrm.accounting.shuffle.randomizer_spec import RandomizerSpec, parse_randomizer
from darrm.errors import ParameterError
from darrm.json_vocabulary import VOCABULARY


def _run(argv, capsys):
    p = argparse.ArgumentParser()
    register(p.add_subparsers())
    args = p.parse_args(argv)
    return args.func(args), capsys.readouterr().out


@pytest.mark.parametrize("text,expected", [
    ("rappor:3", rappor(3, 1.3)), ("oue:4", oue(4, 1.3)), ("hadamard:5", hadamard_response(5, 1.3)),
    ("rr:3@0.25", poisson_subsampled(RandomizedResponse(1.3, 3), 0.25)),
    ("oue:2@0.5", poisson_subsampled(oue(2, 1.3), 0.5)),
])
def test_each_spec_builds_the_library_randomizer(text, expected):
    got = parse_randomizer(text).build(1.3)
    np.testing.assert_array_equal(got.array, expected.array)


def test_generic_and_rr_build_their_classes_and_labels_round_trip():
    assert parse_randomizer("generic").build(2.0) == GenericLDP(2.0)
    assert parse_randomizer("rr:2").build(0.5) == RandomizedResponse(0.5, 2)
    for text in ("generic", "rr:10", "oue:8@0.1", "hadamard:3@0.5"):
        assert parse_randomizer(text).label == text


@pytest.mark.parametrize("text,match", [
    ("", "expected"), ("bogus:3", "unknown"), ("rr:2@", "expected"), ("rr:", "expected"),
    ("oue", "number of inputs"), ("rr:x", "expected"),
    ("rr:1", r"\[2,"), ("rappor:17", r"\[2, 16\]"), ("oue:4@0", r"\(0, 1\]"), ("oue:4@1.5", r"\(0, 1\]"),
    ("oue:4@nan", "finite"), ("generic:3", "no number of inputs"), ("generic@0.5", "specific"),
])
def test_bad_specs_name_the_randomizer(text, match):
    with pytest.raises(ParameterError, match=match) as exc:
        parse_randomizer(text)
    assert exc.value.parameter == "randomizer"


def test_library_entry_points_take_a_spec_and_refuse_it_with_classes():
    spec = RandomizerSpec("oue", 2, 0.5)
    recs = bound_records(500, [1.0], 1e-5, spec=spec)
    direct = all_bounds(poisson_subsampled(oue(2, 1.0), 0.5), 500, delta=1e-5, include_invalid=True)
    assert [r["eps"] for r in recs] == [b.as_record()["eps"] for b in direct]
    with pytest.raises(ParameterError, match="not both"):
        bound_records(500, [1.0], 1e-5, classes=3, spec=spec)
    e0 = eps0_for_target(0.5, 2000, 1e-6, spec=RandomizerSpec("rr", 2))
    assert central_epsilon(e0, 2000, 1e-6, spec=RandomizerSpec("rr", 2)) <= 0.5


def test_cli_randomizer_json_is_the_library_bounds(capsys):
    rc, out = _run(["shuffle", "--n", "500", "--eps0", "1", "--delta", "1e-5", "--randomizer", "oue:2@0.2",
                    "--json"], capsys)
    assert rc == 0
    recs = json.loads(out)
    assert {k for r in recs for k in r} <= VOCABULARY
    ours = {r["method"]: r["epsilon"] for r in recs if r["valid"]}
    lib = {b.method: b.eps for b in all_bounds(poisson_subsampled(oue(2, 1.0), 0.2), 500, delta=1e-5)}
    assert ours == lib


def test_cli_randomizer_with_rounds_and_target(capsys):
    rc, out = _run(["shuffle", "--n", "1000", "--eps0", "1", "--delta", "1e-6", "--randomizer", "rr:2",
                    "--rounds", "3", "--json"], capsys)
    assert rc == 0 and json.loads(out)[0]["epsilon_total"] > 0
    rc, out = _run(["shuffle", "--n", "1000", "--target-eps", "0.8", "--delta", "1e-6", "--randomizer",
                    "rr:2", "--json"], capsys)
    rec = json.loads(out)
    assert rc == 0 and rec["epsilon_total"] <= 0.8


@pytest.mark.parametrize("extra,name", [
    (["--randomizer", "bogus:2"], "randomizer"),
    (["--randomizer", "rr:2", "--classes", "2"], "randomizer"),
    (["--randomizer", "oue:3"], "plot"),
])
def test_cli_bad_randomizer_is_refused_before_anything_is_written(extra, name, tmp_path, capsys):
    png = tmp_path / "eps.png"
    argv = ["shuffle", "--n", "500", "--eps0", "1", "--delta", "1e-6", *extra]
    if name == "plot":
        argv += ["--plot", str(png)]
    with pytest.raises(ParameterError) as exc:
        _run(argv, capsys)
    assert exc.value.parameter == name and "\n" not in str(exc.value)
    assert not png.exists()
