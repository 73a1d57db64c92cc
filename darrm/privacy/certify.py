"""Independent privacy certificate for any symmetric γ table.

Computes, from the definition of DaRRM (Algorithm 1) rather than from the LP rows,

    Pr[A(D)=1] = Σ_l α_l·w_l,   Pr[A(D)=0] = Σ_l α_l·w_{K−l},   w_l = γ(l)·1{l ≥ mid} + ½(1 − γ(l)),

for every multiset of corners of the (ε, Δ) region (Lemma 5.1: no other point of ∏F
can do worse, because each output probability is affine in each (p_i, p′_i)), and
returns the largest violation of

    Pr[A(D)=o] ≤ e^{mε}·Pr[A(D′)=o] + δ

over both outputs o ∈ {0, 1} and both directions (D, D′) and (D′, D), as the rigorous
float64 bound v̂ of :mod:`darrm.privacy.condition`: every probability is a sum of non-negative
terms with a proven relative error ≤ ρ(K), and v̂ ≤ 0 proves that the exact violation is
≤ 0.  A table is certified iff max v̂ ≤ 0.  The threshold is absolute, in probability
units, and never scaled by e^{mε}; ``tol`` can only make it stricter (tol ≤ 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from ..backends.devices import TorchDevice
from ..backends.executors import Executor, check_executor
from ..errors import CertificationError, ParameterError
from ..gamma import validate_gamma
from ..mechanism import output_weights
from ..params import PrivacyParams
from ..validation import flag, instance, positive
from .condition import Check, repair_factor, violation
from .corner_pmfs import pmf_pairs
from .corners import complements, corner_count, corners, iter_count_vector_blocks, multiset_count
from .sweep import sweep, sweep_executor

#: The certificate's threshold on its rigorous bound v̂: exactly private, nothing widened.
THRESHOLD = 0.0


def validate_tol(tol: float | None) -> float:
    """``tol`` may only tighten the certificate: None → 0, else a finite number ≤ 0."""
    if tol is None:
        return THRESHOLD
    if isinstance(tol, bool):
        raise ParameterError("tol", f"must be a number <= 0, got {tol!r}")
    try:
        t = float(tol)
    except (TypeError, ValueError):
        raise ParameterError("tol", f"must be a number <= 0, got {tol!r}") from None
    if not math.isfinite(t) or t > THRESHOLD:
        raise ParameterError(
            "tol", f"must be finite and <= 0 (a certificate cannot be loosened past exact privacy), got {tol!r}"
        )
    return t


@dataclass(frozen=True)
class Certificate:
    """Result of :func:`certify`.

    Attributes:
        violation: max over multisets, outputs and directions of the rigorous bound v̂ on
            Pr[A(D)=o] − e^{mε}Pr[A(D′)=o] − δ (:mod:`darrm.privacy.condition`): v̂ ≤ 0 proves the exact
            violation ≤ 0; when positive, the exact violation is ≤ v̂/(1−ρ).
        worst_counts: the corner multiset (count per corner) attaining it.
        worst_output: the output o ∈ {0, 1} attaining it.
        worst_direction: "D,D'" or "D',D", the direction attaining it.
        checked: number of multisets examined.
        tol: the threshold (0, or stricter when negative).
        rho: the relative forward-error bound ρ(K) the verdict accounts for.
    """

    violation: float
    worst_counts: tuple[int, ...]
    worst_output: int
    worst_direction: str
    checked: int
    tol: float = THRESHOLD
    rho: float = 0.0

    @property
    def certified(self) -> bool:
        return self.violation <= self.tol


def output_probability(alpha: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Pr[DaRRM_γ = 1] for vote-count pmfs α (N, K+1) (Algorithm 1, as in the proof of Lemma 3.4)."""
    return alpha @ output_weights(gamma)


def validate_max_memory(max_memory: object) -> float | None:
    """``max_memory``: None (the memory available) or a finite number of bytes > 0."""
    return None if max_memory is None else positive("max_memory", max_memory)


def zero_certificate(params: PrivacyParams, checked: int, tol: float) -> Certificate:
    """γ ≡ 0 releases a fair coin whatever the votes: exactly (0, 0)-DP, violation ½ − ½e^{mε} − δ."""
    v = min(0.0, 0.5 - 0.5 * params.exp_meps - float(params.delta))
    return Certificate(v, (), 1, "D,D'", checked, tol, params.check.rho)


def members_composition_covers(params: PrivacyParams) -> bool:
    """Whether the claim (mε, δ) follows for EVERY γ from the members alone: m = K and pure members
    (Δ = δ = 0), or m = K and δ ≥ K·Δ (with a float margin).

    *Proof.*  DaRRM_γ is a post-processing of the K votes, and the K members, each (ε, Δ)-DP, are
    jointly (Kε, KΔ)-DP by basic composition (Dwork & Roth 2014, Theorem 3.16), (Kε, 0) when Δ = 0.
    So the exact violation is ≤ 0 at every configuration.  The float64 test cannot always show it:
    it adds the absolute slack η(1 + 2e^{mε}) (underflow and flushed terms) to every configuration,
    also where both probabilities are structurally 0 (members at the corners p ∈ {0, 1} and γ(l) = 1
    put all of L's mass where Pr[A = o | L] = 0), and with δ = 0 nothing absorbs it (γ ≡ 1 at m = K,
    Δ = 0: v̂ = 2.2e-148 at K = 11).  The theorem decides those cases exactly."""
    if float(params.m) != float(params.K):
        return False
    if params.member_delta == 0.0:
        return True
    return float(params.delta) >= params.K * params.member_delta * (1.0 + 4.0 * params.K * 2.0**-53)


def certify(
    gamma: np.ndarray,
    params: PrivacyParams,
    *,
    tol: float | None = None,
    executor: Executor | TorchDevice | None = None,
    progress: bool | None = None,
    max_memory: float | None = None,
) -> Certificate:
    """Largest DP violation of DaRRM_γ over all corner multisets, outputs and directions.

    Uses the factorised exact sweep of :mod:`darrm.privacy.sweep` (a few operations per multiset,
    memory C(K+5,5) instead of C(K+7,7)); :func:`certify_reference` computes the same
    numbers by a direct Poisson-binomial pmf per multiset and is used to test it.

    When the float64 bound is positive but the claim follows from the members alone
    (:func:`members_composition_covers`: m = K), the certificate says so with violation 0.

    Before any work the sweep's peak memory is estimated (:func:`darrm.privacy.sweep.sweep_memory`,
    logged at DEBUG) and the certificate is refused when it exceeds ``max_memory`` bytes (None:
    the memory available now, :func:`darrm.backends.resources.available_memory`).  Without an
    ``executor`` as many local worker processes run as fit (:func:`darrm.privacy.sweep.default_executor`).

    Raises:
        ParameterError: bad arguments, or the sweep does not fit the memory budget (naming
            ``max_memory`` when one was given, else ``K``).
    """
    g = validate_gamma(gamma, params.K)
    t = validate_tol(tol)
    budget = validate_max_memory(max_memory)
    C = corner_count(params.member_delta)
    if not np.any(g):
        return zero_certificate(params, multiset_count(params.K, C), t)
    executor = sweep_executor(params, executor, budget)
    res = sweep(g, params, top=1, threshold=-np.inf, executor=executor, progress=progress)
    if res.max_violation > t and t >= 0.0 and members_composition_covers(params):
        return Certificate(0.0, (), 1, "D,D'", res.checked, t, params.check.rho)
    worst = res.candidates[0]
    cs, comp = corners(params.eps, params.member_delta), complements(params.eps, params.member_delta)
    _, out, direction = certify_reference_counts(g, params, worst[None, :], cs, comp)
    return Certificate(res.max_violation, tuple(int(c) for c in worst), out, direction, res.checked, t,
                       params.check.rho)


def _violations(a: np.ndarray, ap: np.ndarray, g: np.ndarray, chk: Check) -> np.ndarray:
    """(N, 4) rigorous bounds v̂: output 1 D→D′, output 1 D′→D, output 0 D→D′, output 0 D′→D.

    Pr[A = 0] uses the weights reversed (w_{K−l} = Pr[A = 0 | L = l] for a symmetric γ), a
    non-negative sum like Pr[A = 1], never 1 − Pr[A = 1]."""
    w = output_weights(g)
    p1, pp1 = a @ w, ap @ w
    p0, pp0 = a @ w[::-1], ap @ w[::-1]
    return np.stack([violation(p1, pp1, chk), violation(pp1, p1, chk),
                     violation(p0, pp0, chk), violation(pp0, p0, chk)], axis=1)


def certify_reference_counts(
    g: np.ndarray, params: PrivacyParams, counts: np.ndarray, cs: np.ndarray, comp: np.ndarray | None = None
) -> tuple[float, int, str]:
    """(violation, output, direction) of the worst of the given multisets, computed directly."""
    if comp is None:
        comp = complements(params.eps, params.member_delta)
    a, ap = pmf_pairs(counts, cs, comp)
    cand = _violations(a, ap, g, params.check)
    i, j = np.unravel_index(np.argmax(cand), cand.shape)
    return float(cand[i, j]), 1 if j < 2 else 0, "D,D'" if j % 2 == 0 else "D',D"


def certify_reference(
    gamma: np.ndarray,
    params: PrivacyParams,
    *,
    tol: float | None = None,
    block: int = 1 << 15,
    progress: bool | None = None,
) -> Certificate:
    """Direct certificate: the Poisson-binomial pmfs of every multiset by dynamic programming,
    then both outputs and both directions (slow; the reference for :func:`certify`)."""
    g = validate_gamma(gamma, params.K)
    t = validate_tol(tol)
    cs, comp = corners(params.eps, params.member_delta), complements(params.eps, params.member_delta)
    chk = params.check
    total = multiset_count(params.K, cs.shape[0])
    best = -np.inf
    worst: tuple = ((), 1, "D,D'")
    checked = 0
    bar = tqdm(total=total, desc="certify", unit="multiset", leave=False,
               disable=(not progress) if progress is not None else None)
    with bar:
        for counts in iter_count_vector_blocks(params.K, cs.shape[0], block):
            a, ap = pmf_pairs(counts, cs, comp)
            cand = _violations(a, ap, g, chk)
            i, j = np.unravel_index(np.argmax(cand), cand.shape)
            if cand[i, j] > best:
                best = float(cand[i, j])
                worst = (tuple(int(c) for c in counts[i]), 1 if j < 2 else 0, "D,D'" if j % 2 == 0 else "D',D")
            checked += counts.shape[0]
            bar.update(counts.shape[0])
    return Certificate(best, worst[0], worst[1], worst[2], checked, t, chk.rho)


def repair(gamma: np.ndarray, params, violation: float) -> tuple[np.ndarray, float]:
    """Scale γ (or its upper half) toward 0 so that the certificate's bound v̂ becomes ≤ 0.

    ``violation`` is the largest v̂ of ``gamma`` (the certificate's or a sweep's); ``params``
    is anything with a ``check`` (:class:`~darrm.params.PrivacyParams`, disjoint parameters).
    The factor comes from :func:`darrm.privacy.condition.repair_factor`: every v̂ is affine in the
    scale with the same negative value at 0, so one factor repairs every configuration."""
    s = repair_factor(params.check, violation)
    return np.asarray(gamma, dtype=np.float64) * s, s


#: how many times :func:`certify_and_repair` re-scales before it gives up
REPAIR_ATTEMPTS = 3


def certify_and_repair(gamma: np.ndarray, params, certify_fn) -> tuple[np.ndarray, Certificate, float]:
    """(γ, certificate, total scale): ``gamma`` itself when ``certify_fn`` certifies it, else
    γ scaled by :func:`repair` (re-certified each time) until it is.

    Raises:
        CertificationError: still not certified after :data:`REPAIR_ATTEMPTS` repairs (or no
            room to scale into, e.g. an ε so small that float64 cannot tell e^ε from 1).
    """
    g = np.asarray(gamma, dtype=np.float64)
    cert = certify_fn(g)
    scale = 1.0
    for _ in range(REPAIR_ATTEMPTS):
        if cert.certified:
            break
        g, s = repair(g, params, cert.violation - cert.tol)
        scale *= s
        cert = certify_fn(g)
        if s == 0.0:
            break
    if not cert.certified:
        raise CertificationError(
            f"γ is not certified even after scaling by {scale:.6g}: largest violation bound "
            f"{cert.violation:.3e} > {cert.tol:g} (worst multiset {cert.worst_counts}, output "
            f"{cert.worst_output}, {cert.worst_direction})"
        )
    return g, cert, scale


#: A closed-form table whose bound v̂ is positive but at most this is treated as *undecided*
#: (an exactly tight constraint: float64 rounding of the table itself may put it ~1e-17 either
#: side of the boundary) and scaled by :func:`repair`; anything larger is a real violation.
TIGHT_LIMIT = 1e-9


def certify_tight(gamma: np.ndarray, params: PrivacyParams, *, progress: bool | None = None,
                  executor: Executor | TorchDevice | None = None,
                  max_memory: float | None = None) -> tuple[np.ndarray, Certificate, float]:
    """(γ, certificate, scale) for a closed-form table that is private in exact arithmetic
    and may be tight (γ_Sub, γ_DSub, RR with τ = m, γ ≡ 1 at the threshold m).

    The float64 table can sit on either side of a tight constraint by rounding, so no rigorous
    checker can certify it as is; when the bound is within :data:`TIGHT_LIMIT` the table is
    scaled toward 0 by 1 − O(ρ) until it is certified (``scale`` < 1 says so).  A table that
    violates by more is returned unchanged with its failing certificate (scale 1).
    ``max_memory``: the memory budget of every certificate (:func:`certify`).

    Args:
        gamma: the closed-form table, K + 1 values in [0, 1].
        params: the members' (ε, Δ), K, m and δ.
        progress: show progress bars (None: on a terminal).
        executor: where the certificates run (None: chosen by size).
        max_memory: the memory budget of each certificate in bytes (None: the memory available).

    Returns:
        (γ, its certificate, the scale applied: 1 if unchanged).

    Raises:
        ParameterError: a parameter is invalid, or a certificate would not fit ``max_memory``.
    """
    instance("params", params, PrivacyParams, "a darrm.PrivacyParams")
    flag("progress", progress, allow_none=True)
    check_executor("executor", executor)
    g = validate_gamma(gamma, params.K)
    budget = validate_max_memory(max_memory)

    def run(h: np.ndarray) -> Certificate:
        return certify(h, params, progress=progress, executor=executor, max_memory=budget)

    cert = run(g)
    if cert.certified or cert.violation > TIGHT_LIMIT:
        return g, cert, 1.0
    return certify_and_repair(g, params, run)
