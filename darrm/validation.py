"""One parameter vocabulary for darrm, darrm.accounting and darrm.experiments.

Every check raises :class:`darrm.errors.ParameterError` naming the parameter and returns
the value converted (``float`` / ``int``), so a boundary validates and normalises in one
line.  The rules, decided once for all three packages:

* **Numbers**: ``bool`` and strings are refused; numpy scalars are accepted; NaN is refused,
  and so is ±∞ unless a check says otherwise.
* **Counts** (K, k, n, steps, queries, …) are integers: ``int`` or numpy integers.
  Integral floats such as ``3.0`` are refused in the API (a count written as a float is
  usually a bug); the command lines parse ``1e6`` into an integer themselves
  (:func:`count_arg`).
* **Intervals** are written as in scikit-learn's ``Interval``: ``closed`` is "both",
  "left", "right" or "neither".  ε is > 0 unless stated (ε = 0 is a degenerate claim the
  mechanisms never make); δ-like values lie in [0, 1), targets of a calibration in (0, 1).
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar, cast, overload

from .errors import ParameterError, ParameterTypeError

if TYPE_CHECKING:
    import numpy as np

_Choice = TypeVar("_Choice", bound=str)
_Item = TypeVar("_Item")

_CLOSED = ("both", "left", "right", "neither")


def _describe(low: float | None, high: float | None, closed: str) -> str:
    left = "[" if closed in ("both", "left") else "("
    right = "]" if closed in ("both", "right") else ")"
    lo = "-inf" if low is None else f"{low:g}"
    hi = "inf" if high is None else f"{high:g}"
    return f"{left}{lo}, {hi}{right}"


def real(name: str, value: object, low: float | None = None, high: float | None = None, *,
         closed: str = "both", allow_inf: bool = False) -> float:
    """A real number in the interval (``low``, ``high``) with the given ``closed`` ends."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(name, f"must be a real number, got {_short(value)}")
    try:
        x = float(value)
    except OverflowError:  # an integer (or Fraction) beyond float64: 10**400
        raise ParameterError(name, f"must be a finite number, got {_short(value)} (beyond float64)") from None
    if math.isnan(x) or (math.isinf(x) and not allow_inf):
        raise ParameterError(name, f"must be a finite number, got {value!r}")
    if closed not in _CLOSED:  # pragma: no cover - programming error
        raise ValueError(f"closed must be one of {_CLOSED}")
    lo_ok = low is None or (x >= low if closed in ("both", "left") else x > low)
    hi_ok = high is None or (x <= high if closed in ("both", "right") else x < high)
    if not (lo_ok and hi_ok):
        raise ParameterError(name, f"must lie in {_describe(low, high, closed)}, got {value!r}")
    return x


def positive(name: str, value: object) -> float:
    """A finite real number > 0 (ε, σ, ...)."""
    return real(name, value, 0.0, None, closed="neither")


def non_negative(name: str, value: object) -> float:
    """A finite real number >= 0."""
    return real(name, value, 0.0, None, closed="left")


#: largest ε anywhere: e^ε must be representable in float64
EPS_MAX = 700.0


def epsilon(name: str, value: object, *, allow_zero: bool = False) -> float:
    """An ε in (0, 700] ([0, 700] with ``allow_zero``): e^ε must be representable."""
    return real(name, value, 0.0, EPS_MAX, closed="both" if allow_zero else "right")


def open_unit(name: str, value: object) -> float:
    """A probability in the open interval (0, 1), e.g. a target δ of a calibration."""
    return real(name, value, 0.0, 1.0, closed="neither")


def half_open_unit(name: str, value: object) -> float:
    """A probability in [0, 1), e.g. a per-mechanism Δ or a target δ that may be 0."""
    return real(name, value, 0.0, 1.0, closed="left")


def unit(name: str, value: object) -> float:
    """A probability in [0, 1]."""
    return real(name, value, 0.0, 1.0)


def sample_rate(name: str, value: object) -> float:
    """A sampling probability q in (0, 1]."""
    return real(name, value, 0.0, 1.0, closed="right")


#: largest count anywhere: 2^53, the largest integer float64 represents exactly (every count
#: ends up in float64 arithmetic; beyond it numpy's integer paths overflow)
COUNT_MAX = 2**53


def count(name: str, value: object, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer in [minimum, maximum] (k, steps, Q, ...; maximum defaults to :data:`COUNT_MAX`);
    integral floats are refused."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(name, f"must be an integer, got {value!r}")
    n = int(value)
    if maximum is None:
        maximum = COUNT_MAX
    if n < minimum or n > maximum:
        rng = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ParameterError(name, f"must be an integer {rng}, got {_short(n)}")
    return n


def odd_count(name: str, value: object) -> int:
    """A positive odd integer up to :data:`COUNT_MAX` (K: the majority of an odd number of votes
    has no ties)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ParameterError(name, f"must be an odd integer >= 1, got {value!r}")
    k = int(value)
    if k < 1 or k % 2 == 0:
        raise ParameterError(name, f"must be an odd integer >= 1, got {_short(k)}")
    if k > COUNT_MAX:
        raise ParameterError(name, f"must be an odd integer in [1, {COUNT_MAX}], got {_short(k)}")
    return k


def choice(name: str, value: object, options: tuple[_Choice, ...] | list[_Choice]) -> _Choice:
    """One of ``options`` (strings), typed as they are (e.g. a ``Literal``)."""
    if not isinstance(value, str) or value not in options:
        raise ParameterError(name, f"must be one of {', '.join(map(str, options))}; got {value!r}")
    return cast(_Choice, value)  # value is one of options


def count_arg(text: str) -> int:
    """argparse type for counts: accepts ``1000``, ``1e6``, ``1_000``; refuses non-integers."""
    import argparse

    try:
        x = float(str(text).replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if not math.isfinite(x) or x != int(x):
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}")
    return int(x)


def instance(name: str, value: object, types: type | tuple[type, ...], what: str, *, allow_none: bool = False):
    """``value`` itself when it is an instance of ``types`` (or None with ``allow_none``); else a
    :class:`~darrm.errors.ParameterTypeError` saying it must be ``what``."""
    if (allow_none and value is None) or isinstance(value, types):
        return value
    raise ParameterTypeError(name, f"must be {what}, got {_short(value)}")


@overload
def flag(name: str, value: object, *, allow_none: Literal[False] = False) -> bool: ...
@overload
def flag(name: str, value: object, *, allow_none: bool) -> bool | None: ...
def flag(name: str, value: object, *, allow_none: bool = False) -> bool | None:
    """A ``bool`` (numpy's included; ``None`` with ``allow_none``): 0, 1, strings and arrays are refused."""
    if allow_none and value is None:
        return None
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    raise ParameterTypeError(name, f"must be True or False{' or None' if allow_none else ''}, got {_short(value)}")


def function(name: str, value: object, *, allow_none: bool = False):
    """A callable (``None`` with ``allow_none``)."""
    if (allow_none and value is None) or callable(value):
        return value
    raise ParameterTypeError(name, f"must be a function{' or None' if allow_none else ''}, got {_short(value)}")


def path(name: str, value: object) -> Path:
    """A file path: a non-empty ``str`` or ``os.PathLike`` of ``str`` (bytes paths are refused)."""
    p = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(p, str):
        raise ParameterTypeError(name, f"must be a file path (str or pathlib.Path), got {_short(value)}")
    if p == "" or "\x00" in p:
        raise ParameterError(name, f"must be a file path, got {value!r}")
    return Path(p)


def generator(name: str, value: object) -> np.random.Generator:
    """A ``numpy.random.Generator`` from ``value``: None, a seed (integer >= 0 or a sequence of them),
    a ``SeedSequence``, a ``BitGenerator`` or a ``Generator``."""
    import numpy as np

    if isinstance(value, (bool, np.bool_)):
        raise ParameterTypeError(name, f"must be a numpy Generator or an integer seed >= 0, got {value!r}")
    try:
        return np.random.default_rng(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError) as exc:
        raise ParameterError(name, f"must be a numpy Generator or an integer seed >= 0, got {_short(value)} "
                                   f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None


def float_array(name: str, value: object):
    """``value`` as a float64 numpy array; None, strings, bools, complex, ragged and non-numeric data are refused."""
    import numpy as np

    if value is None or isinstance(value, (str, bytes, dict, bool)):
        raise ParameterTypeError(name, f"must be an array of numbers, got {_short(value)}")
    try:
        a = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise ParameterError(name, f"must be an array of numbers ({str(exc).splitlines()[0]})") from None
    if a.dtype.kind not in "iuf":
        raise ParameterTypeError(name, f"must be an array of numbers, got dtype {a.dtype}")
    return a.astype(np.float64)


def _short(value: object) -> str:
    try:
        r = repr(value).replace("\n", " ")
    except ValueError:  # an int past Python's digit limit for str() (sys.set_int_max_str_digits)
        return f"an integer of {int(cast(int, value)).bit_length()} bits"
    return r if len(r) <= 60 else f"{type(value).__name__} {r[:50]}…"


_Group = TypeVar("_Group")


def comma_list(name: str, text: object, convert: Callable[[str], _Item], what: str) -> tuple[_Item, ...]:
    """The items of a comma-separated value (``--eps0 0.5,1,2``), each converted by ``convert``: the
    one list parser of the command lines.  An empty item (``1,,2``, a leading or trailing comma) is
    refused, never dropped: a dropped item silently changes what is computed.

    Args:
        name: the option or parameter named by every error.
        text: the value as given.
        convert: builds one item from its text (raising ValueError, or ParameterError when out of
            its domain).
        what: what an item is, in messages (``"numbers > 0"``).

    Returns:
        The items, in the order written.

    Raises:
        ParameterError: naming ``name``: no text, an empty item, or an item ``convert`` refuses.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParameterError(name, f"expected comma-separated {what}, got {text!r}")
    items = [t.strip() for t in text.split(",")]
    if "" in items:
        raise ParameterError(name, f"empty item in {text!r} (position {items.index('') + 1}); expected "
                                   f"comma-separated {what}")
    out = []
    for t in items:
        try:
            out.append(convert(t))
        except (ValueError, TypeError, OverflowError) as exc:
            if isinstance(exc, ParameterError):
                raise ParameterError(name, str(exc).split(": ", 1)[-1]) from None
            raise ParameterError(name, f"{t!r} is not one of the comma-separated {what}") from None
    return tuple(out)


def colon_groups(option: str, text: object, spelling: str, integer: str,
                 make: Callable[[int, float, float], _Group]) -> tuple[_Group, ...]:
    """Groups written ``a:b:c,a:b:c,…`` (an integer and two numbers each; ``darrm solve --groups``,
    ``--record-groups``, ``--budget-groups``), each built by ``make``.

    Args:
        option: the option named by every error.
        text: the option's value.
        spelling: how one group is written in messages, e.g. ``"count:eps:Delta"``.
        integer: what the integer is called in messages, e.g. ``"count"``.
        make: builds one group from its three values (raising ParameterError when out of domain).

    Returns:
        The groups, in the order written.

    Raises:
        ParameterError: naming ``option``, for a malformed item or a value out of its domain.
    """
    if not isinstance(text, str) or not text.strip():
        raise ParameterError(option, f"must be {spelling}[,{spelling}…], got {text!r}")
    out = []
    for item in text.split(","):
        parts = item.strip().split(":")
        if len(parts) != 3:
            raise ParameterError(option, f"each group is {spelling}, got {item.strip()!r}")
        try:
            a, b, c = int(parts[0]), float(parts[1]), float(parts[2])
        except ValueError:
            raise ParameterError(option, f"each group is {spelling} with an integer {integer} and two numbers, "
                                         f"got {item.strip()!r}") from None
        try:
            out.append(make(a, b, c))
        except ParameterError as exc:
            raise ParameterError(option, f"group {item.strip()!r}: {exc}") from None
    return tuple(out)


def group_item(name: str, g: object, i: int, kind: type[_Group], spelling: str) -> _Group:
    """Group ``i`` of a sequence given to a parameters type: a ``kind`` as is, or a 2- or 3-tuple
    (or list) of its fields.

    Raises:
        ParameterError: naming ``name``, for anything else or a value out of its domain.
    """
    if isinstance(g, kind):
        return g
    if isinstance(g, (tuple, list)) and len(g) in (2, 3):
        try:
            return kind(*g)
        except (ParameterError, TypeError) as exc:
            raise ParameterError(name, f"group {i}: {exc}") from None
    raise ParameterError(name, f"group {i} must be a {kind.__name__} or ({spelling}), got {g!r}")
