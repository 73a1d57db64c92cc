"""Issue 15: darrm-experiments refuses an unusable output folder (or an output that is an input) with
one line naming the option, exit 2, before anything is computed, loaded or trained."""

from __future__ import annotations

import pytest

from darrm.experiments import cli


@pytest.fixture
def nothing_runs(monkeypatch):
    """Every experiment's first step fails the test: the paths must be refused before it."""
    import darrm.experiments.disjoint.real as real
    import darrm.experiments.disjoint.synthetic as synthetic
    import darrm.experiments.pate.cli as pate_cli
    import darrm.experiments.simulations.runner as runner

    def boom(*a, **k):
        raise AssertionError("work started before the output paths were checked")

    monkeypatch.setattr(runner, "run_all", boom)
    monkeypatch.setattr(synthetic, "run_synthetic", boom)
    monkeypatch.setattr(real, "load_votes", boom)
    monkeypatch.setattr(pate_cli, "require", boom)  # the first thing pate does after the paths


def _refused(capsys, argv, option):
    rc = cli.main(argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith(f"darrm-experiments: error: {option}:"), err
    return lines[0]


@pytest.mark.parametrize("base", [
    ["simulations", "--quick"],
    ["disjoint", "synthetic", "--K", "11"],
    ["disjoint", "real", "--dataset", "mnist"],
    ["pate", "--dataset", "mnist", "--quick"],
])
def test_unusable_out_is_refused_first(capsys, tmp_path, nothing_runs, base):
    a_file = tmp_path / "results.json"
    a_file.write_text("{}")
    assert "not a directory" in _refused(capsys, [*base, "--out", str(a_file)], "out")
    assert "not a directory" in _refused(capsys, [*base, "--out", str(a_file / "sub")], "out")
    # an empty value (usually an unset shell variable) is a usage error of the parser, naming the option
    with pytest.raises(SystemExit) as exc:
        cli.main([*base, "--out", ""])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "error: argument --out: empty value" in err[0], err
    assert a_file.read_text() == "{}"


@pytest.mark.parametrize("base", [["disjoint", "real", "--dataset", "mnist"], ["pate", "--dataset", "mnist"]])
def test_cache_and_data_folders_are_checked_and_never_the_output(capsys, tmp_path, nothing_runs, base):
    out, data = tmp_path / "out", tmp_path / "data"
    data.mkdir()
    a_file = tmp_path / "f"
    a_file.write_text("x")
    _refused(capsys, [*base, "--out", str(out), "--cache-dir", str(a_file)], "cache-dir")
    assert "no such directory" in _refused(capsys, [*base, "--out", str(out), "--data-dir", str(tmp_path / "nope")],
                                           "data-dir")
    assert "input folder" in _refused(capsys, [*base, "--out", str(data), "--data-dir", str(data)], "out")
    assert "same folder" in _refused(capsys, [*base, "--out", str(out), "--cache-dir", str(out)], "cache-dir")
    assert not out.exists()  # nothing was created either


def test_a_missing_out_folder_is_fine_and_created(tmp_path, capsys, monkeypatch):
    import darrm.experiments.disjoint.synthetic as synthetic

    monkeypatch.setattr(synthetic, "run_synthetic", lambda Ks, eps, delta, log: [])
    monkeypatch.setattr("darrm.experiments.disjoint.output.plot_synthetic", lambda *a: None)
    out = tmp_path / "new" / "deeper"
    assert cli.main(["disjoint", "synthetic", "--out", str(out)]) == 0
    assert out.is_dir()


def test_bad_figures_refused_before_computing(capsys, tmp_path, nothing_runs):
    _refused(capsys, ["simulations", "--out", str(tmp_path), "--figures", "3"], "figures")
