"""Issue 16: the conventions every command line shares (darrm.cli_conventions), checked on every parser.

Help text and a shown default for every option, a description for every subcommand, the common
options before and after the subcommand, --quiet/--verbose through logging, warnings once,
darrm-experiments --version, and a fast start (no heavy import for --help).
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import warnings

import pytest

from darrm import cli
from darrm.cli_conventions import subparsers_of
from darrm.experiments import cli as xcli
from darrm.logs import NORMAL, QUIET, VERBOSE, cli_logging

PARSERS = {"darrm": cli.build_parser, "darrm-experiments": xcli.build_parser}
FLAGS = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._StoreConstAction,
         argparse._CountAction, argparse._VersionAction, argparse._HelpAction)


def _every_parser(build):
    top = build()
    return [(top.prog, top), *[(f"{top.prog} {path}", p) for path, p in subparsers_of(top)]]


def _rendered_help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = parser._get_formatter()
    return formatter._expand_help(action) if action.help else ""


@pytest.mark.parametrize("prog", PARSERS)
def test_every_option_has_help_and_a_shown_default_and_every_command_a_description(prog):
    missing_help, missing_default, missing_description = [], [], []
    parsers = _every_parser(PARSERS[prog])
    assert len(parsers) >= (12 if prog == "darrm" else 5)  # the walk sees the plugins' and nested subcommands
    for name, parser in parsers:
        if name != prog and not (parser.description or "").strip():
            missing_description.append(name)
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            label = f"{name} {'/'.join(action.option_strings) or action.dest}"
            if not (action.help or "").strip():
                missing_help.append(label)
                continue
            if action.option_strings and not isinstance(action, FLAGS) and not action.required:
                if "default" not in _rendered_help(parser, action).lower():
                    missing_default.append(label)
    assert not missing_help, f"options without help: {missing_help}"
    assert not missing_default, f"options whose help shows no default: {missing_default}"
    assert not missing_description, f"subcommands without a description: {missing_description}"


def test_defaults_are_rendered_with_their_values():
    top = cli.build_parser()
    solve = dict(subparsers_of(top))["solve"]
    text = solve.format_help()
    assert "(default: opt)" in text and "(default: iid:0.75)" in text and "(default: 1e-09)" in text
    compose = dict(subparsers_of(top))["account compose"]
    assert "(default: 0.0001)" in " ".join(compose.format_help().split())


@pytest.mark.parametrize("argv,want", [
    (["solve", "--no-progress"], False),
    (["--no-progress", "solve"], False),
    (["--progress", "solve"], True),
    (["--progress", "solve", "--no-progress"], False),  # after the subcommand wins
    (["solve"], None),
    (["account", "gnmax", "--eps", "1", "--delta", "1e-5", "--progress"], True),
    (["shuffle", "--n", "10", "--eps0", "1", "--delta", "1e-6", "--no-progress"], False),
])
def test_progress_is_accepted_before_and_after_the_subcommand(argv, want):
    args = cli.build_parser().parse_args(argv)
    assert args.progress is want


@pytest.mark.parametrize("argv", [
    ["pate", "--dataset", "mnist", "--out", "o", "--no-progress"],
    ["--no-progress", "pate", "--dataset", "mnist", "--out", "o"],
    ["simulations", "--out", "o", "-q"],
    ["-v", "disjoint", "synthetic", "--out", "o"],
    ["disjoint", "real", "--out", "o", "--debug"],
])
def test_experiments_accept_the_same_common_options(argv):
    args = xcli.build_parser().parse_args(argv)
    assert callable(args.func)
    assert args.progress in (None, False) and isinstance(args.quiet, bool) and isinstance(args.debug, bool)


def test_quiet_and_verbose_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["solve", "-q", "-v"])
    assert e.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_experiments_version(capsys):
    from darrm import __version__

    with pytest.raises(SystemExit) as e:
        xcli.main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"darrm-experiments {__version__}"


# -- logging -------------------------------------------------------------------------------------

_ROUNDS = ["solve", "--K", "13", "--method", "cutting-planes"]


def test_solver_rounds_are_logged_only_when_asked(capsys):
    assert cli.main(["--no-progress", *_ROUNDS]) == 0
    assert "round" not in capsys.readouterr().err  # off a terminal, no --progress: quiet
    assert cli.main([*_ROUNDS, "--no-progress", "--verbose"]) == 0
    err = capsys.readouterr().err
    assert "round" in err and all(not ln.startswith("darrm: warning") for ln in err.splitlines())
    assert cli.main(["-q", *_ROUNDS, "--progress"]) == 0  # explicit bars, but -q keeps the INFO lines out
    err = capsys.readouterr().err
    assert "multiset" in err and "round" not in err
    assert cli.main(["-q", *_ROUNDS]) == 0
    assert capsys.readouterr().err == ""


def test_cli_logging_levels_and_cleanup(capsys):
    log = logging.getLogger("darrm.test")
    for level, shown in ((QUIET, {"w"}), (NORMAL, {"i", "w"}), (VERBOSE, {"d", "i", "w"})):
        with cli_logging("prog", level):
            log.debug("d")
            log.info("i")
            log.warning("w")
        lines = capsys.readouterr().err.splitlines()
        got = {ln.rsplit(" ", 1)[-1] for ln in lines}
        assert got == shown, (level, lines)
        assert ("prog: warning: w" in lines)
    assert not [h for h in logging.getLogger("darrm").handlers if not isinstance(h, logging.NullHandler)]
    log.warning("after")  # no handler left behind: nothing printed by darrm's CLI handler
    assert "after" not in capsys.readouterr().err


def test_third_party_warnings_are_shown_once(capsys):
    before = list(warnings.filters)

    def teacher():  # the same warning from one call site, once per "teacher"
        warnings.warn("secure RNG turned off", UserWarning, stacklevel=1)

    with cli_logging("darrm-experiments"):
        for _ in range(5):
            teacher()
            warnings.simplefilter("default", DeprecationWarning)  # libraries touch the filters between calls
    err = capsys.readouterr().err.splitlines()
    hits = [ln for ln in err if "secure RNG turned off" in ln]
    assert len(hits) == 1 and hits[0].startswith("darrm-experiments: warning:") and "UserWarning" in hits[0]
    assert warnings.filters == before  # restored after the run


# -- start-up time ---------------------------------------------------------------------------------

HEAVY = ("numpy", "scipy", "cvxpy", "matplotlib", "torch", "dask", "distributed", "dp_accounting", "opacus",
         "highspy", "tqdm")


def _imported_after(code: str, full: bool = False) -> set[str]:
    """Top-level packages (``full``: every module) imported by a fresh interpreter running ``code``."""
    probe = (f"import sys\n{code}\n"
             "print('MODULES ' + ' '.join(sorted(sys.modules)))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("MODULES "))
    mods = set(line.split()[1:])
    return mods if full else {m.split(".")[0] for m in mods}


def test_help_imports_no_heavy_library():
    mods = _imported_after(
        "from darrm.cli import main\n"
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main(['--help'])\n    except SystemExit:\n        pass")
    assert "darrm" in mods and not mods & set(HEAVY), sorted(mods & set(HEAVY))


def test_experiments_help_imports_no_heavy_library():
    mods = _imported_after(
        "from darrm.experiments.cli import main\n"
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main(['--help'])\n    except SystemExit:\n        pass")
    assert not mods & set(HEAVY), sorted(mods & set(HEAVY))


def test_verify_imports_no_solver_plotting_or_gpu_library(tmp_path):
    g = tmp_path / "g.json"
    assert cli.main(["--no-progress", "solve", "--K", "5", "--out", str(g)]) == 0
    mods = _imported_after(
        "from darrm.cli import main\n"
        f"assert main(['verify', {str(g)!r}, '--json']) == 0", full=True)
    top = {m.split(".")[0] for m in mods}
    assert not top & {"cvxpy", "matplotlib", "torch", "dask", "distributed", "opacus", "dp_accounting", "highspy"}
    # ~0.6 s of imports a check never needs
    assert not mods & {"scipy.stats", "scipy.optimize", "darrm.solver.request", "darrm.solver.gamma_opt"}


def test_json_flag_prints_one_document(capsys, tmp_path):
    g = tmp_path / "g.json"
    assert cli.main(["solve", "--K", "5", "--out", str(g), "--json", "--no-progress"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["gamma_file"] == str(g) and len(doc["gamma"]) == 6


@pytest.mark.parametrize("prog", PARSERS)
def test_an_empty_value_after_a_subcommand_names_the_option_not_the_command(prog, capsys):
    """``--out ""`` (an unset shell variable) is refused naming ``--out``: the top-level parser
    leaves the subcommand's command line to the subcommand's parser."""
    argv = ["solve", "--K", "3", "--m", "1", "--out", ""] if prog == "darrm" else ["simulations", "--out", ""]
    with pytest.raises(SystemExit) as exc:
        PARSERS[prog]().parse_args(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "error: argument --out: empty value" in err[0], err
