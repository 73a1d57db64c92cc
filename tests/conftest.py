import itertools
import os
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest

from darrm.params import PrivacyParams

# the tests' independent references (tests/references/: brute force in high precision), not shipped
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """Spread the suite over the machine's cores by default: ``pytest -q`` means ``pytest -q -n logical
    --dist loadfile`` when pytest-xdist (the ``test`` extra) is installed (logical: the CPUs this
    process may run on, which is what a CPU-bound worker needs).  ``-n N`` chooses the
    number of workers, ``-n 0`` or ``-p no:xdist`` runs in this one process, ``--pdb`` runs in one
    process (xdist's own rule for ``auto``).  ``loadfile`` keeps a file's tests in one worker, so a
    module-scoped fixture (the docs site build, a shared solve) is built once.  Each worker gets
    ``cores // workers`` BLAS/OpenMP threads unless the environment already sets them, so workers
    do not oversubscribe the cores.  (Only the initial conftest sees this hook, which is this file
    for ``pytest``, ``pytest tests`` and any path below ``tests/``.)"""
    if not config.pluginmanager.hasplugin("xdist") or "PYTEST_XDIST_WORKER" in os.environ:
        return
    option = config.option
    if option.numprocesses is None and not option.collectonly:
        option.numprocesses = "logical"
    if option.numprocesses and option.dist == "no":
        option.dist = "loadfile"
    if option.numprocesses in ("auto", "logical") and not config.getoption("usepdb", False):
        workers = config.hook.pytest_xdist_auto_num_workers(config=config)
    else:
        workers = option.numprocesses or 0
    if workers > 1:
        from darrm.cli_conventions import THREAD_VARIABLES

        threads = str(max(1, (os.cpu_count() or 1) // workers))
        for var in THREAD_VARIABLES:
            os.environ.setdefault(var, threads)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def cli(capsys):
    """``cli(*argv)`` runs ``darrm ARGV…`` in this process: (exit code, stdout, stderr).  A usage
    error (argparse's SystemExit) is an exit code like any other."""
    from darrm.cli import main

    def run(*argv):
        try:
            rc = main(list(argv))
        except SystemExit as exc:
            rc = exc.code
        out = capsys.readouterr()
        return rc, out.out, out.err

    return run


@pytest.fixture
def paper_params():
    """Figure 2 of the paper: K=11, ε=0.1, Δ=1e-5, δ = 1-(1-Δ)^m."""

    def make(m, member_delta=1e-5, delta=None):
        return PrivacyParams(K=11, m=m, eps=0.1, member_delta=member_delta, delta=delta)

    return make


def _exact_product_delta(pairs: list[tuple[np.ndarray, np.ndarray]], eps: float) -> float:
    """H_{e^ε}(⊗P_i ‖ ⊗Q_i) by enumerating every tuple of atoms, in mpmath (independent of dp_accounting)."""
    with mpmath.workdps(40):
        s = mpmath.exp(mpmath.mpf(eps))
        total = mpmath.mpf(0)
        for combo in itertools.product(*[range(len(P)) for P, _ in pairs]):
            p = mpmath.fprod(mpmath.mpf(float(pairs[i][0][j])) for i, j in enumerate(combo))
            q = mpmath.fprod(mpmath.mpf(float(pairs[i][1][j])) for i, j in enumerate(combo))
            if p > s * q:
                total += p - s * q
        return float(total)


@pytest.fixture(scope="session")
def exact_product_delta():
    """``exact_product_delta(pairs, ε)``: the hockey-stick divergence of the product of dominating
    pairs (P_i, Q_i) at e^ε, every tuple of atoms enumerated at 40 digits (composition tests)."""
    return _exact_product_delta


# Property tests are derandomised so that every run (and CI) explores the same examples;
# set HYPOTHESIS_PROFILE=explore locally to search with fresh random seeds.
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", deadline=None, max_examples=1000)

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
