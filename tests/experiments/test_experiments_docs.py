"""The examples of docs/experiments.md run and print what their comments say; every
``darrm-experiments`` command in the experiment docs is a valid command line."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from darrm.experiments.cli import build_parser

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _blocks(name: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", (DOCS / name).read_text(encoding="utf-8"), re.S)


def _run_printing(block: str) -> None:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(block, "docs/experiments.md", "exec"), {})  # noqa: S102 - our own documentation
    expected = [c.strip() for c in re.findall(r"^print\(.*\)[ \t]+#[ \t]*(.+)$", block, re.M)]
    assert expected and buf.getvalue().splitlines() == expected


def test_release_registry_example_prints_its_comments():
    (block,) = [b for b in _blocks("experiments.md", "python") if "release(" in b]
    _run_printing(block)


def test_data_example_prints_the_task_sizes(shared_datasets):
    (block,) = [b for b in _blocks("experiments.md", "python") if "load_dataset" in b]
    _run_printing(block)


@pytest.mark.parametrize("doc", ["experiments.md", "simulations.md", "disjoint.md"])
def test_every_documented_command_parses(doc):
    lines = [ln.split("#")[0].strip() for b in _blocks(doc, "bash") for ln in b.splitlines()]
    commands = [shlex.split(ln)[1:] for ln in lines if ln.startswith(".venv/bin/darrm-experiments ")]
    assert commands
    parser = build_parser()
    for argv in commands:
        args = parser.parse_args(argv)
        assert callable(args.func), argv


def test_public_split_example_prints_its_comments():
    (block,) = [b for b in _blocks("experiments.md", "python") if "HeldOutSet" in b]
    _run_printing(block)


def test_plurality_examples_print_their_comments():
    """The top-two table example and the profile example that reuses its ``table``, run in order."""
    blocks = _blocks("experiments.md", "python")
    (solve,) = [b for b in blocks if "solve_top_two(" in b]
    (profile,) = [b for b in blocks if "composed_plurality_epsilon(" in b]
    block = solve + profile
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(block, "docs/experiments.md", "exec"), {})  # noqa: S102 - our own documentation
    # each comment is "<printed value>: <what it means>"
    expected = [c.split(":")[0].strip() for c in re.findall(r"^print\(.*\)[ \t]+#[ \t]*(.+)$", block, re.M)]
    assert len(expected) == 5 and buf.getvalue().splitlines() == expected


def test_duel_family_example_prints_its_comments():
    (block,) = [b for b in _blocks("experiments.md", "python") if "design_duel(" in b]
    _run_printing(block)
