"""An independent 40-digit brute force for record groups on shards, shared by the certificate and
profile tests.

It puts each of group g's r_g changed members, one by one (an ordered tuple, not a multiset), at
every vertex of the member region, and each unchanged member, one by one, at each end of its
interval; it builds the vote-count pmf at 40 digits with mpmath from the members' own vote
probabilities and evaluates Pr[A(D) = o] and Pr[A(D′) = o] for both outputs directly (no
reflection argument).  It shares no code with :mod:`darrm.models.shard_groups` except γ; the vertices and
the Bernoulli-sum law come from the high-precision reference
(:func:`references.profile_reference.mp_member_region`, :func:`~references.profile_reference.mp_pmf`:
the member models' closed forms in mpmath, not the certificate's float64 code).
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import mpmath
import numpy as np
import pytest
from references.profile_reference import mp_member_region as region
from references.profile_reference import mp_pmf as pmf

mpmath.mp.dps = 40


def release_one(alpha, gamma) -> mpmath.mpf:
    """Pr[A = 1] of Algorithm 1 for the vote-count law ``alpha``."""
    K = len(alpha) - 1
    mid = (K + 1) // 2
    return mpmath.fsum(a * (mpmath.mpf(float(g)) * (1 if l >= mid else 0) + (1 - mpmath.mpf(float(g))) / 2)
                       for l, (a, g) in enumerate(zip(alpha, gamma, strict=True)))


def release_zero(alpha, gamma) -> mpmath.mpf:
    """Pr[A = 0] of Algorithm 1 for the vote-count law ``alpha``, evaluated directly (not 1 − Pr[A = 1])."""
    K = len(alpha) - 1
    mid = (K + 1) // 2
    return mpmath.fsum(a * (mpmath.mpf(float(g)) * (1 if l < mid else 0) + (1 - mpmath.mpf(float(g))) / 2)
                       for l, (a, g) in enumerate(zip(alpha, gamma, strict=True)))


def outputs(gamma: np.ndarray, params, copies: int) -> list[tuple]:
    """(Pr[A(D) = o], Pr[A(D′) = o]) for o = 1 and o = 0 at every ordered tuple of vertices of the
    ``copies`` changed members and every end of every unchanged member (40 digits)."""
    verts, ends = region(params.member)
    out = []
    for changed in itertools.product(verts, repeat=copies):
        for others in itertools.product(ends, repeat=params.K - copies):
            a = pmf([v[0] for v in changed] + list(others))
            b = pmf([v[1] for v in changed] + list(others))
            out.append((release_one(a, gamma), release_one(b, gamma)))
            out.append((release_zero(a, gamma), release_zero(b, gamma)))
    return out


def worst(gamma: np.ndarray, params) -> list[mpmath.mpf]:
    """For every record group: the largest exact Pr[A(D)=o] − e^{ε_g} Pr[A(D′)=o] − δ_g over every
    configuration, both outputs and both directions."""
    res = []
    for grp in params.groups:
        e, d = mpmath.exp(mpmath.mpf(grp.target_eps)), mpmath.mpf(grp.target_delta)
        res.append(max(max(pa - e * pb - d, pb - e * pa - d) for pa, pb in outputs(gamma, params, grp.copies)))
    return res


def profile(gamma: np.ndarray, params, eps: list[float]) -> list[list[mpmath.mpf]]:
    """For every record group, δ_g(ε′) = max over every configuration, output and direction of
    max(0, Pr[A(D)=o] − e^{ε′}·Pr[A(D′)=o]), at each ε′ of ``eps``."""
    res = []
    for grp in params.groups:
        outs = outputs(gamma, params, grp.copies)
        row = []
        for x in eps:
            s = mpmath.exp(mpmath.mpf(x))
            row.append(max([mpmath.mpf(0)] + [max(a - s * b, b - s * a) for a, b in outs]))
        res.append(row)
    return res


@pytest.fixture(scope="session")
def brute():
    """The brute force (module docstring): ``brute.worst(γ, params)``, ``brute.profile(γ, params, eps)``,
    ``brute.region``, ``brute.pmf``, ``brute.release_one``."""
    return SimpleNamespace(worst=worst, profile=profile, region=region, pmf=pmf, release_one=release_one)
