"""Fuzzing support (issue 15): bad-value strategies, a per-property input tally, and its summary.

Every fuzz property draws inputs that are invalid for one parameter (NaN, ±inf, negatives,
zero, 1e300, bools, strings, wrong shapes, …) and asserts the error contract: a one-line
:class:`darrm.errors.DarrmError` (API) or a one-line message with exit code 2 (command lines),
nothing written, inputs unchanged.  The tally of inputs tried is printed at the end of the run
(``fuzz: N inputs tried``), with the split into bad inputs, fault runs and concurrency runs and the
number of failed fuzz tests (``fuzz probes: …``), so a release note can quote it
(tests/fuzz/README.md).
"""

from __future__ import annotations

import math
import signal
from collections import Counter
from contextlib import contextmanager
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import strategies as st

from darrm.validation import COUNT_MAX, EPS_MAX

_TALLY: Counter = Counter()

#: every property's settings: reproducible (derandomize), no deadline (first calls import modules)
SETTINGS = dict(deadline=None, derandomize=True, database=None)

#: a call that has not failed after this many seconds did not validate up front
CALL_LIMIT_S = 20


class TooSlow(AssertionError):
    """A call with an invalid argument ran past :data:`CALL_LIMIT_S` instead of failing at once."""


@contextmanager
def time_limit(seconds: int = CALL_LIMIT_S):
    def on_alarm(signum, frame):
        raise TooSlow(f"still running after {seconds} s: the invalid value was not refused up front")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


#: what a property's examples are: bad inputs, injected faults (failing system calls, SIGKILLs),
#: or runs of racing processes
KINDS = ("input", "fault", "concurrency")
_KIND: dict[str, str] = {}


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not _TALLY:
        return
    tr = terminalreporter
    tr.section("fuzz inputs tried (issue 15)")
    for name in sorted(_TALLY):
        tr.write_line(f"{_TALLY[name]:6d}  {name}")
    by_kind = {k: sum(n for name, n in _TALLY.items() if _KIND[name] == k) for k in KINDS}
    failed = sum(1 for r in tr.stats.get("failed", []) if "/fuzz/" in str(getattr(r, "nodeid", "")).replace("\\", "/"))
    tr.write_line(f"fuzz: {sum(_TALLY.values())} inputs tried over {len(_TALLY)} properties")
    tr.write_line(f"fuzz probes: {by_kind['input']} bad inputs, {by_kind['fault']} fault runs, "
                  f"{by_kind['concurrency']} concurrency runs; {failed} failed fuzz tests")


@pytest.fixture(scope="session")
def tally():
    """``tally(name, kind="input")`` counts one example of the property ``name``: a bad input, a
    fault run or a concurrency run (:data:`KINDS`)."""
    def count(name: str, kind: str = "input") -> None:
        assert kind in KINDS, kind
        _KIND[name] = kind
        _TALLY[name] += 1
    return count


# -- bad values for the Python API ------------------------------------------------------------------

WRONG_TYPES = [None, "0.5", "abc", "", b"1", True, False, np.bool_(True), [0.5], (1,), {"x": 1}, 1 + 2j,
               object(), np.array([0.5, 0.5])]
NON_FINITE = [math.nan, math.inf, -math.inf, np.float64("nan"), np.float32("inf")]


def _floats(lo=None, hi=None, **kw):
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False, **kw)


def bad_real(lo: float | None, hi: float | None, lo_closed: bool = True, hi_closed: bool = True,
             integral_ok: bool = True):
    """Values outside the real interval (lo, hi) with the given closed ends, and wrong types."""
    parts = [st.sampled_from(WRONG_TYPES + NON_FINITE)]
    if lo is not None:
        parts.append(st.sampled_from([lo - 1.0, -1e300] + ([] if lo_closed else [lo])))
        parts.append(_floats(hi=lo, exclude_max=lo_closed).filter(lambda x: x < lo or (x == lo and not lo_closed)))
    if hi is not None:
        parts.append(st.sampled_from([1e300, hi + 1.0] + ([] if hi_closed else [hi])))
        parts.append(_floats(lo=hi, exclude_min=hi_closed).filter(lambda x: x > hi or (x == hi and not hi_closed)))
    return st.one_of(*parts)


def bad_positive():
    return bad_real(0.0, None, lo_closed=False)


def bad_epsilon(allow_zero: bool = False):
    return bad_real(0.0, EPS_MAX, lo_closed=allow_zero)


def bad_open_unit():
    return bad_real(0.0, 1.0, False, False)


def bad_half_unit():
    return bad_real(0.0, 1.0, True, False)


def bad_unit():
    return bad_real(0.0, 1.0)


def bad_count(minimum: int = 1, maximum: int = COUNT_MAX, integral_floats_ok: bool = False):
    """Non-integers (3.0 included unless ``integral_floats_ok``: counts are integers), out-of-range
    integers, wrong types."""
    floats = [2.5] if integral_floats_ok else [3.0, 2.5, np.float64(4.0)]
    return st.one_of(
        st.sampled_from(WRONG_TYPES + NON_FINITE + floats + [minimum - 1, -(2**70), 2**70]),
        st.integers(max_value=minimum - 1),
        st.integers(min_value=maximum + 1),
        st.integers(min_value=-(2**63), max_value=minimum - 1).map(np.int64),
    )


def bad_odd():
    return st.one_of(bad_count(1), st.integers(min_value=0, max_value=10**6).map(lambda k: 2 * k))


def bad_choice(options):
    return st.one_of(st.sampled_from([None, 1, "", " ", b"x", True] + [o.upper() + "!" for o in options]),
                     st.text(max_size=8).filter(lambda s: s not in options))


def bad_vector(length: int | None = None, lo: float = 0.0, hi: float = 1.0):
    """Array-likes that are not a 1-D finite vector in [lo, hi] of the given length."""
    parts = [st.sampled_from([None, "abc", 0.5, [], np.array([]), np.zeros((2, 2)), [[0.5]], ["a", "b"],
                              np.array([math.nan, 0.5]), [math.inf] * (length or 2), {"a": 1}])]
    if length is not None:
        parts.append(st.integers(0, 3 * length + 3).filter(lambda n: n != length).map(lambda n: np.full(n, 0.5)))
    n = length or 3
    parts.append(st.lists(st.one_of(_floats(hi=lo, exclude_max=True), _floats(lo=hi, exclude_min=True)),
                          min_size=1, max_size=1).map(lambda b: np.concatenate([np.full(n - 1, (lo + hi) / 2), b])))
    return st.one_of(*parts)


@pytest.fixture(scope="session")
def bad():
    """The bad-value strategies, by domain (see the module docstring)."""
    return SimpleNamespace(real=bad_real, positive=bad_positive, epsilon=bad_epsilon, open_unit=bad_open_unit,
                           half_unit=bad_half_unit, unit=bad_unit, count=bad_count, odd=bad_odd, choice=bad_choice,
                           vector=bad_vector, wrong_types=st.sampled_from(WRONG_TYPES), time_limit=time_limit)
