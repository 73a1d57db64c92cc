"""A shared, byte-capped cache of the read-only index arrays of a sweep block that depend on R only.

An exhaustive sweep asks for each R once, but a screening pass of constraint generation
(:class:`darrm.solver.cutting_planes.SweepOracle`) asks again for the same few dozen R in every
round: measured at K = 81 (m = 5, ε = 0.1, Δ = 1e-5), 363 of 369 lookups missed the old 8-entry
LRU, because a screen cycles through ~30 R, and rebuilding the arrays was ~30 % of a screen's CPU.

Admission, not eviction: an array is kept while the cache holds less than :data:`MAX_BYTES`,
and once it is full new ones are computed and not kept.  With a cyclic pattern (every screen
visits its R in the same order) least-recently-used eviction would keep nothing useful; keeping
the first ones keeps a fixed share.  The arrays are read-only, so sharing them is safe, and the
values are the function's own: the sweep is the same bit for bit with any cap (0: no caching).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

#: bytes this process may keep in the cache (0 turns it off); ~80·C(R+3, 3) bytes per R (the
#: tetrahedron, layout, triple and collapse cells), so all R of K = 101 take ~380 MB and the ~70 R
#: of a K = 81 solve's screens ~115 MB
MAX_BYTES = 256 * 2**20

_LOCK = threading.Lock()
_STORE: dict[tuple[str, int], Any] = {}
_USED = [0]

F = TypeVar("F", bound=Callable[..., Any])


def _nbytes(value: Any) -> int:
    arrays = value if isinstance(value, tuple) else (value,)
    return sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))


def per_r_cache(fn: Callable[[int], Any]) -> Callable[[int], Any]:
    """Cache ``fn(R)`` (read-only numpy arrays, or a tuple of them) in the shared store.

    Args:
        fn: a pure function of R alone returning read-only arrays.

    Returns:
        The cached function (``cache_clear()`` empties the whole store).
    """
    name = f"{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def cached(R: int) -> Any:
        key = (name, int(R))
        with _LOCK:
            if key in _STORE:
                return _STORE[key]
        value = fn(R)
        size = _nbytes(value)
        with _LOCK:
            if key not in _STORE and _USED[0] + size <= MAX_BYTES:
                _STORE[key] = value
                _USED[0] += size
        return value

    cached.cache_clear = clear  # type: ignore[attr-defined]
    return cached


def clear() -> None:
    """Empty the store."""
    with _LOCK:
        _STORE.clear()
        _USED[0] = 0


def used_bytes() -> int:
    """Bytes held now."""
    return _USED[0]
