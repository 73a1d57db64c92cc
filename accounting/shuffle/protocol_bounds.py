"""The bound records of multi-message and metric specs (``darrm shuffle --randomizer rr:4+2`` / ``geo:K``).

Single-message randomizers go through :func:`.best.bound_records` (every registered method); the
protocols of :mod:`.multi_message` and :mod:`.metric_ldp` are not ε0-LDP randomizers of every user,
so the single-message methods do not apply to them and they carry their own upper and lower bounds.
"""

from __future__ import annotations

from darrm import validation as v
from darrm.errors import ParameterError

from .metric_ldp import MetricRandomizer, distance_profile
from .multi_message import MultiMessageProtocol, bounds
from .randomizer_spec import RandomizerSpec


def protocol_records(n: int, eps0s: list[float], delta: float, spec: RandomizerSpec) -> list[dict]:
    """Upper and lower ε(δ) records for each ε0 of a multi-message or metric spec.

    Multi-message: two records per ε0 (:func:`.multi_message.bounds`) with ``blankets``; metric: two
    per ε0 and distance (:func:`.metric_ldp.distance_profile`, the worst pair at each distance) with
    ``distance``.  Each is :meth:`~.bound.Bound.as_record` plus ``eps0`` and ``n``.

    Args:
        n: the number of users.
        eps0s: the input-dependent message's ε0 values (metric: ε per unit of distance).
        delta: the target δ in (0, 1).
        spec: a spec with :attr:`~.randomizer_spec.RandomizerSpec.own_bounds`.

    Returns:
        The records.

    Raises:
        ParameterError: a parameter out of range, or a single-message spec.
    """
    v.instance("spec", spec, RandomizerSpec, "a RandomizerSpec (parse_randomizer)")
    if not spec.own_bounds:
        raise ParameterError("randomizer", f"{spec.label} is a single-message randomizer: use bound_records")
    n, delta = v.count("n", n), v.open_unit("delta", delta)
    recs: list[dict] = []
    for e0 in eps0s:
        proto = spec.build_protocol(e0)
        if isinstance(proto, MultiMessageProtocol):
            for b in bounds(proto, n, delta):
                recs.append({**b.as_record(), "eps0": e0, "n": n, "blankets": proto.blankets})
        else:
            assert isinstance(proto, MetricRandomizer)
            for row in distance_profile(proto, n, delta):
                for b in (row.upper, row.lower):
                    recs.append({**b.as_record(), "eps0": e0, "n": n, "distance": row.distance})
    return recs
