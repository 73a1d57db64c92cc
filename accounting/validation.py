"""Boundary checks shared by the accounting modules.

Every check raises :class:`darrm.errors.ParameterError` naming the parameter, and
returns the value converted to ``float``/``int`` so callers can validate and
normalise in one line.
"""

from __future__ import annotations

import math
import numbers

from darrm.errors import ParameterError


def _real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(name, f"must be a real number, got {value!r}")
    x = float(value)
    if math.isnan(x):
        raise ParameterError(name, "must not be NaN")
    return x


def positive(name: str, value: object) -> float:
    """A finite real number > 0 (ε, σ, ...)."""
    x = _real(name, value)
    if not (0.0 < x < math.inf):
        raise ParameterError(name, f"must be finite and > 0, got {value!r}")
    return x


def non_negative(name: str, value: object) -> float:
    """A finite real number >= 0."""
    x = _real(name, value)
    if not (0.0 <= x < math.inf):
        raise ParameterError(name, f"must be finite and >= 0, got {value!r}")
    return x


def open_unit(name: str, value: object) -> float:
    """A probability in the open interval (0, 1), e.g. a target δ."""
    x = _real(name, value)
    if not (0.0 < x < 1.0):
        raise ParameterError(name, f"must lie in (0, 1), got {value!r}")
    return x


def half_open_unit(name: str, value: object) -> float:
    """A probability in [0, 1), e.g. a per-mechanism δ that may be 0."""
    x = _real(name, value)
    if not (0.0 <= x < 1.0):
        raise ParameterError(name, f"must lie in [0, 1), got {value!r}")
    return x


def sample_rate(name: str, value: object) -> float:
    """A sampling probability q in (0, 1]."""
    x = _real(name, value)
    if not (0.0 < x <= 1.0):
        raise ParameterError(name, f"must lie in (0, 1], got {value!r}")
    return x


def count(name: str, value: object, minimum: int = 1) -> int:
    """An integer >= ``minimum`` (k, steps, Q, ...); integral floats are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(name, f"must be an integer, got {value!r}")
    n = int(value)
    if n < minimum:
        raise ParameterError(name, f"must be >= {minimum}, got {n}")
    return n
