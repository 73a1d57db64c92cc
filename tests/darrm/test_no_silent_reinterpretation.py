"""Values are refused, never reinterpreted: an empty list item is not dropped, an option's error names
that option, a huge integer is a ParameterError (not an OverflowError), an unreadable input folder is
refused before any work, a full disk names the output option, and a δ_total no plurality table can
be certified for is refused before torch loads.  Every refusal: one line naming the parameter, exit 2,
nothing written."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import darrm
from darrm.errors import ParameterError


def _one_line(err: str, name: str, prog: str = "darrm") -> bool:
    return err.count("\n") == 1 and err.startswith(f"{prog}: error: {name}: ")


@pytest.mark.parametrize("text", ["1,,2", "1,", ",1", " , "])
def test_an_empty_list_item_is_refused_not_dropped(cli, text):
    rc, out, err = cli("shuffle", "--n", "1000", "--eps0", text, "--delta", "1e-6")
    assert rc == 2 and _one_line(err, "eps0") and out == "", err
    from darrm.validation import comma_list

    with pytest.raises(ParameterError, match=r"^x: (empty item|expected comma-separated)"):
        comma_list("x", text, float, "numbers")
    assert comma_list("x", " 1, 2 ", float, "numbers") == (1.0, 2.0)


@pytest.mark.parametrize("argv", [["pate", "--dataset", "mnist", "--classes", "10", "--total-eps", "1,,2"],
                                  ["individual", "--copies", "1,,2"],
                                  ["simulations", "--figures", "2,,6"]])
def test_the_experiments_list_options_refuse_an_empty_item(tmp_path, argv):
    r = subprocess.run([sys.executable, "-m", "darrm.experiments.cli", *argv, "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "empty item in '" in r.stderr, r.stderr
    assert not (tmp_path / "o").exists()


def test_shuffle_classes_out_of_range_names_classes(cli):
    rc, _, err = cli("shuffle", "--n", "1000", "--eps0", "1", "--delta", "1e-6", "--classes", "1000000000")
    assert rc == 2 and _one_line(err, "classes") and "1048576" in err, err


@pytest.mark.parametrize("huge", [10**400, -10**400, 10**5000], ids=["1e400", "-1e400", "1e5000"])
def test_an_integer_beyond_float64_is_a_parameter_error(huge):
    table = darrm.solve(darrm.PrivacyParams(K=3, m=1, eps=0.1, member_delta=1e-5), family="const")
    from darrm.accounting import LabellingSession

    with pytest.raises(ParameterError, match=r"^budget_epsilon: must be a finite number, got .*beyond float64"):
        LabellingSession(table, budget_epsilon=huge, delta=1e-3, member_randomness="fresh")
    with pytest.raises(ParameterError, match=r"^queries: must be an integer in \[1, \d+\], got "):
        darrm.TotalBudget(1.0, 1e-3, huge)


def test_an_unreadable_data_dir_is_refused_at_once_naming_the_option():
    import shutil
    import tempfile
    from pathlib import Path

    from darrm.experiments.data.locations import check_locations

    base = Path(tempfile.mkdtemp(prefix="darrm-data-dir-"))  # searchable by the ordinary user below
    os.chmod(base, 0o755)
    data = base / "data"
    data.mkdir()
    (data / "mnist").mkdir()
    os.chmod(data, 0o000)
    t0 = time.monotonic()
    try:
        if os.geteuid() == 0:  # root reads any folder: check as an ordinary user (effective ids)
            os.setegid(65534)
            os.seteuid(65534)
        with pytest.raises(ParameterError, match=r"^data-dir: .*cannot read the folder: Permission denied"):
            check_locations(None, str(base / "cache"), str(data))
    finally:
        if os.getuid() == 0:
            os.seteuid(0)
            os.setegid(0)
        os.chmod(data, 0o755)
        shutil.rmtree(base)
    assert time.monotonic() - t0 < 5


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EFBIG])
def test_a_full_disk_names_the_output_option_and_leaves_the_old_file(cli, tmp_path, monkeypatch, code):
    table = darrm.solve(darrm.PrivacyParams(K=3, m=1, eps=0.1, member_delta=1e-5), family="const")
    g, votes, out = tmp_path / "g.json", tmp_path / "v.npy", tmp_path / "labels.txt"
    darrm.save(table, g)
    np.save(votes, np.ones((3, 3), dtype=int))
    out.write_text("old labels\n")
    real_fsync = os.fsync

    def full(fd):
        if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(".labels.txt."):
            raise OSError(code, os.strerror(code))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", full)
    rc, _, err = cli("aggregate", str(g), "--votes", str(votes), "--out", str(out), "--seed", "0")
    assert rc == 2 and _one_line(err, "out") and os.strerror(code) in err, err
    assert out.read_text() == "old labels\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json", "labels.txt", "v.npy"]  # no temporary
    with pytest.raises(ParameterError, match=rf"^path: .*{os.strerror(code)}.*nothing was written"):
        darrm.save(table, tmp_path / "labels.txt")  # the API names its parameter


def test_a_total_delta_no_plurality_table_certifies_is_refused_before_any_work(tmp_path):
    from darrm.experiments.pate.multiclass_config import MulticlassConfig
    from darrm.experiments.pate.plurality_top_two import ROUNDING_MARGIN, solve_top_two

    for d in (1e-300, ROUNDING_MARGIN):
        with pytest.raises(ParameterError, match=r"^total_delta: must exceed 1e-12"):
            MulticlassConfig("mnist", total_delta=d)
        with pytest.raises(ParameterError, match=r"^delta: must exceed the certificate's rounding margin"):
            solve_top_two(5, 3, 1.0, d / 2)
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-W", "error", "-m", "darrm.experiments.cli", "pate", "--dataset", "mnist",
                        "--classes", "10", "--quick", "--total-delta", "1e-300", "--out", str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "total_delta: must exceed" in r.stderr, r.stderr
    assert time.monotonic() - t0 < 30  # before torch loads (measured 4.3 s on a loaded 2-core machine)
    assert not (tmp_path / "o").exists()
