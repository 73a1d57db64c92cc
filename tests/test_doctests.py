"""The main entry points carry a short runnable example in their docstrings, and the examples
print what they say (doctest, run here so that pytest collects them like any other test).

Each example is small (K = 5) so that all of them run in a few seconds; they run in a scratch
folder, with doctest's ``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``.
"""

from __future__ import annotations

import doctest
import os

import pytest

import darrm
import darrm.accounting

#: every entry point a new user meets first; each must have an example
ENTRY_POINTS = {
    "darrm.solve": darrm.solve,
    "darrm.certify": darrm.certify,
    "darrm.aggregate": darrm.aggregate,
    "darrm.accounting.LabellingSession": darrm.accounting.LabellingSession,
    "darrm.accounting.best_upper_bound": darrm.accounting.best_upper_bound,
}
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _run(name: str, obj: object) -> tuple[int, int, str]:
    """(examples, failures, report) of the doctests in ``obj``'s own docstring."""
    globs = {name.rsplit(".", 1)[-1]: obj}  # the examples import what else they use
    tests = [t for t in doctest.DocTestFinder(recurse=False).find(obj, name, globs=globs) if t.examples]
    out: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests:
        runner.run(test, out=out.append)
    return sum(len(t.examples) for t in tests), runner.failures, "".join(out)


@pytest.mark.parametrize("name", list(ENTRY_POINTS))
def test_the_entry_points_example_runs_and_prints_what_it_says(name, tmp_path):
    here = os.getcwd()
    os.chdir(tmp_path)  # an example may write a file
    try:
        examples, failures, report = _run(name, ENTRY_POINTS[name])
    finally:
        os.chdir(here)
    assert examples >= 2, f"{name}: no runnable example in its docstring"
    assert failures == 0, report


def test_a_wrong_example_fails():
    def doubled(x: int) -> int:
        """
        >>> doubled(2)
        5
        """
        return 2 * x

    examples, failures, report = _run("doubled", doubled)
    assert (examples, failures) == (1, 1) and "Expected:\n    5\nGot:\n    4" in report
