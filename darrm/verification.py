"""Certify a γ table whatever its members' model, and use only certified tables.

:func:`certify_table` dispatches to the shared-data certificate (:func:`darrm.privacy.certify.certify`,
Lemma 3.4 over Lemma 5.1's corner multisets) or the disjoint-members certificate
(:func:`darrm.disjoint.certify_disjoint`) and remembers recent verdicts by content (the γ
bytes and the parameters), so loading, saving and labelling with one table sweeps it once.
:func:`aggregate` labels votes with a table only after its certificate passes.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

from .disjoint.certificate import certify_disjoint
from .disjoint.params import DisjointParams
from .errors import CertificationError
from .gamma import validate_gamma
from .mechanism import aggregate as _release
from .mechanism import aggregate_counts as _release_counts
from .params import PrivacyParams
from .privacy.certify import Certificate, certify, validate_max_memory, validate_tol
from .table import GammaTable
from .validation import flag, instance

#: verdicts remembered (a verdict is a pure function of the γ bytes, the parameters and tol)
CACHE_SIZE = 64
_cache: OrderedDict = OrderedDict()


def _key(gamma: np.ndarray, params: object, tol: float) -> tuple:
    return (hashlib.sha256(np.ascontiguousarray(gamma, dtype=np.float64).tobytes()).hexdigest(), repr(params), tol)


def certify_gamma(gamma: np.ndarray, params: PrivacyParams | DisjointParams, *, tol: float | None = None,
                  progress: bool | None = None, max_memory: float | None = None) -> Certificate:
    """The certificate matching the parameters' model (shared data or disjoint shards), memoised;
    refused before any work when its estimated memory exceeds ``max_memory`` bytes (None: the
    memory available; :func:`darrm.privacy.certify.certify`)."""
    t = validate_tol(tol)
    budget = validate_max_memory(max_memory)
    instance("params", params, (PrivacyParams, DisjointParams), "a darrm.PrivacyParams or DisjointParams")
    flag("progress", progress, allow_none=True)
    g = validate_gamma(gamma, params.K)
    key = _key(g, params, t)
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    if isinstance(params, DisjointParams):
        cert = certify_disjoint(g, params, tol=t, max_memory=budget)
    else:
        cert = certify(g, params, tol=t, progress=progress, max_memory=budget)
    _cache[key] = cert
    while len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return cert


def certify_table(table: GammaTable, *, tol: float | None = None, progress: bool | None = None) -> Certificate:
    """:func:`certify_gamma` of a table's γ for its own parameters."""
    return certify_gamma(table.gamma, table.params, tol=tol, progress=progress)


def aggregate(votes: object, table: GammaTable, rng: np.random.Generator | int | None = None, *,
              secure: bool = False) -> np.ndarray:
    """Private majority labels from a *certified* table (:func:`darrm.mechanism.aggregate`).

    ``votes`` is a (Q, K) 0/1 matrix (one query: (1, K)); counts go through :func:`aggregate_counts`.
    ``secure=True`` draws every coin from the OS CSPRNG (:mod:`darrm.secure_random`, exact
    Bernoulli(γ(L)) draws) and ignores ``rng``.

    Raises:
        CertificationError: the table is not (ε, δ)-DP for its parameters.
    """
    _check_certified(table)
    return _release(votes, table.gamma, rng, secure=secure)


def _check_certified(table: GammaTable) -> None:
    instance("table", table, GammaTable, "a darrm.GammaTable (darrm.mechanism.aggregate takes a raw γ array)")
    cert = certify_table(table)
    if not cert.certified:
        raise CertificationError(
            f"refusing to label with a table that is not private for its parameters "
            f"(certificate bound {cert.violation:.3e} > 0)"
        )


def aggregate_counts(counts: object, table: GammaTable, rng: np.random.Generator | int | None = None, *,
                     secure: bool = False) -> np.ndarray:
    """:func:`aggregate` from Q vote counts L ∈ [0, K] (a 1-D array) instead of a vote matrix."""
    _check_certified(table)
    return _release_counts(counts, table.gamma, rng, secure=secure)
