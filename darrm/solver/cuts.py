"""Which violated constraints become cuts: the most violated indices of a violation array not yet in the LP."""

from __future__ import annotations

import numpy as np


def most_violated(V: np.ndarray, seen: set, top: int, threshold: float) -> list[tuple[int, ...]]:
    """Up to ``top`` indices of V (most violated first) whose value exceeds ``threshold`` and that
    are not in ``seen`` (the constraint-generation loops of :mod:`darrm.models.disjoint.solver` and
    :mod:`darrm.models.groups.solver`; V's axes are whatever indexes their constraints)."""
    flat = V.ravel()
    hot = np.flatnonzero(flat > threshold)
    out: list[tuple[int, ...]] = []
    for idx in hot[np.argsort(flat[hot])[::-1]]:
        key = tuple(int(i) for i in np.unravel_index(int(idx), V.shape))
        if key not in seen:
            out.append(key)
            if len(out) >= top:
                break
    return out
