"""The certificate's verdict is rigorous at every mε: no table that breaks its claim passes.

An independent checker in 60-digit arithmetic (mpmath, this file only) evaluates the exact
output probabilities of Algorithm 1 at every corner multiset (Lemma 5.1) for both outputs —
Pr[A = 0] as 1 − Pr[A = 1], the definition, with no cancellation at 60 digits — and both
directions, from the *float* γ table as stored.  Crafted tables that break their claim by
1e-6 or more must be rejected everywhere a table enters (certify, save, load, verify,
aggregate), their files carrying valid checksums so that the rejection is the certificate's;
genuine tables at mε up to 28 must pass, and the checker must confirm them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import lru_cache

import mpmath
import numpy as np
import pytest
from references.profile_reference import mp_corners

from darrm import gamma_file
from darrm.errors import CertificationError, GammaFileError, ParameterError
from darrm.gamma import gamma_const, gamma_sub
from darrm.models.disjoint import DisjointParams, NonPrivate, certify_disjoint
from darrm.params import PrivacyParams
from darrm.privacy.certify import certify, certify_tight
from darrm.privacy.condition import relative_error_bound
from darrm.privacy.corners import count_vectors
from darrm.solver.gamma_opt import solve_gamma_opt
from darrm.table import GammaTable
from darrm.verification import aggregate

mpmath.mp.dps = 60


# ----------------------------------------------------------------------------- the independent checker
def _poly_pow(p, n: int) -> list:
    out = [mpmath.mpf(1)]
    for _ in range(n):
        nxt = [mpmath.mpf(0)] * (len(out) + 1)
        for i, a in enumerate(out):
            nxt[i] += a * (1 - p)
            nxt[i + 1] += a * p
        out = nxt
    return out


def _conv(a: list, b: list) -> list:
    out = [mpmath.mpf(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


def exact_max_violation(gamma: np.ndarray, K: int, eps_total: float, eps: float, Delta: float, delta: float) -> float:
    """max over multisets, outputs, directions of Pr[A(D)=o] − e^{ε_tot}·Pr[A(D′)=o] − δ, 60 digits."""
    cs = mp_corners(eps, Delta)
    mid = (K + 1) // 2
    w1 = [(mpmath.mpf(float(g)) if l >= mid else 0) + (1 - mpmath.mpf(float(g))) / 2 for l, g in enumerate(gamma)]
    E = mpmath.exp(mpmath.mpf(eps_total))
    d = mpmath.mpf(delta)

    @lru_cache(maxsize=None)
    def factor(c: int, side: int, n: int) -> tuple:
        return tuple(_poly_pow(cs[c][side], n))

    def alpha(counts, side) -> list:
        a = [mpmath.mpf(1)]
        for c, n in enumerate(counts):
            if n:
                a = _conv(a, list(factor(c, side, int(n))))
        return a

    best = -mpmath.inf
    for counts in count_vectors(K, len(cs)):
        a, ap = alpha(counts, 0), alpha(counts, 1)
        p1 = mpmath.fsum(x * w for x, w in zip(a, w1, strict=True))
        pp1 = mpmath.fsum(x * w for x, w in zip(ap, w1, strict=True))
        for pa, pb in ((p1, pp1), (pp1, p1), (1 - p1, 1 - pp1), (1 - pp1, 1 - p1)):
            best = max(best, pa - E * pb - d)
    return float(best)


def _mp_exact(gamma: np.ndarray, P: PrivacyParams) -> float:
    return exact_max_violation(gamma, P.K, P.m * P.eps, P.eps, P.member_delta, float(P.delta))


# ----------------------------------------------------------------------------- cases
# (K, m, ε, Δ): mε ∈ {14, 20, 28}; pure DP at K = 15 (816 multisets), Δ > 0 at K = 7 (3,432)
LARGE = [(15, 7, 2.0, 0.0), (15, 7, 20 / 7, 0.0), (15, 7, 4.0, 0.0), (7, 3, 28 / 3, 1e-5)]


def _crafted(P: PrivacyParams, target: float) -> np.ndarray:
    """A table whose exact violation is ≈ ``target`` > 0: γ_const scaled up past its boundary
    (v̂ is affine in the scale with the same worst multiset, so one scale hits the target)."""
    g, cert, _ = certify_tight(gamma_const(P), P)
    assert cert.certified
    v1 = _mp_exact(g, P)
    half_rhs = (mpmath.exp(P.m * P.eps) - 1) / 2 + P.delta
    s = float((target + half_rhs) / (v1 + half_rhs))
    out = np.minimum(g * s, 1.0)
    assert np.array_equal(out, out[::-1])
    return out


def _forged_file(tmp_path, table: GammaTable, name: str) -> str:
    """A γ file written around the certificate: every key valid, checksum recomputed."""
    d = gamma_file.table_to_dict(table)
    path = tmp_path / name
    path.write_text(json.dumps(d))
    return str(path)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "darrm.cli", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("K,m,eps,Delta", LARGE, ids=lambda v: str(v))
def test_crafted_tables_breaking_their_claim_are_rejected_everywhere(K, m, eps, Delta, tmp_path):
    P = PrivacyParams(K, m, eps, Delta)
    ones = np.ones(K + 1)
    # at mε = 28 one ulp of γ moves the violation by ~e^28·1e-16 ≈ 1e-4: craft 1e-3 there
    target = 1e-6 if m * eps <= 20 else 1e-3
    for g, lo in ((ones, 1e-3), (_crafted(P, target), target / 2)):
        exact = _mp_exact(g, P)
        assert exact >= lo  # independently: the table is NOT (mε, δ)-DP
        cert = certify(g, P)
        assert not cert.certified and cert.violation >= exact * (1 - 1e-6)
        table = GammaTable(P, g, "custom", violation=-1.0)
        with pytest.raises(GammaFileError):
            gamma_file.save(table, tmp_path / "never.json")
        assert not (tmp_path / "never.json").exists()
        path = _forged_file(tmp_path, table, f"forged_{exact:.0e}.json")
        with pytest.raises(GammaFileError, match="NOT"):
            gamma_file.load(path)
        with pytest.raises(CertificationError):
            aggregate(np.ones((3, K), dtype=int), table, 0)
        r = _cli("verify", path)
        assert r.returncode == 2 and "NOT" in r.stderr and "Traceback" not in r.stderr
        np.save(tmp_path / "v.npy", np.ones((2, K), dtype=int))
        r = _cli("aggregate", path, "--votes", str(tmp_path / "v.npy"))
        assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr


def test_crafted_disjoint_table_at_target_eps_30_is_rejected(tmp_path):
    params = DisjointParams(11, NonPrivate(), 30.0, 0.0)
    g = np.ones(12)  # the plain majority of non-private members: Pr[A(D)=1] − e^30·0 = 1
    cert = certify_disjoint(g, params)
    assert not cert.certified and cert.violation > 0.99
    table = GammaTable(params, g, "custom", violation=-1.0)  # type: ignore[arg-type]
    with pytest.raises(GammaFileError):
        gamma_file.save(table, tmp_path / "never.json")
    path = _forged_file(tmp_path, table, "forged_disjoint.json")
    with pytest.raises(GammaFileError, match="NOT"):
        gamma_file.load(path)
    with pytest.raises(CertificationError):
        aggregate(np.ones((2, 11), dtype=int), table, 0)
    r = _cli("verify", path)
    assert r.returncode == 2 and "NOT" in r.stderr


@pytest.mark.parametrize("K,m,eps,Delta", LARGE, ids=lambda v: str(v))
def test_genuine_tables_pass_at_large_m_eps_and_the_checker_confirms_them(K, m, eps, Delta):
    P = PrivacyParams(K, m, eps, Delta)
    tables = {"opt": solve_gamma_opt(P, progress=False).gamma}
    for name, g in (("sub", gamma_sub(K, m)), ("const", gamma_const(P))):
        g2, cert, scale = certify_tight(g, P)
        assert cert.certified and scale >= 1 - 1e-10, name
        tables[name] = g2
    rho = relative_error_bound(K)
    for name, g in tables.items():
        cert = certify(g, P)
        exact = _mp_exact(g, P)
        assert cert.certified and exact <= 0.0, (name, cert.violation, exact)
        # the bound is an upper bound, and a sharp one: within ~3ρ·(P_a + e^{mε}P_b) ≤ 6ρ
        assert exact <= cert.violation / (1 - rho) + 1e-300
        assert cert.violation - exact <= 8 * rho, (name, cert.violation, exact)


@pytest.mark.parametrize("eps", [2.0, 20 / 7])
def test_certificate_bound_tracks_the_exact_violation_near_the_boundary(eps):
    """Near the boundary at mε = 14 and 20, Pr[A(D′)=o] ~ e^{−mε} is multiplied by e^{mε}: the
    old 1 − Pr[A=1] lost it to cancellation; the bound must stay within 8ρ of the exact value."""
    P = PrivacyParams(15, 7, eps, 0.0)
    rho = relative_error_bound(15)
    for target in (1e-7, -1e-7, -1e-4):
        g = _crafted(P, target)
        exact = _mp_exact(g, P)
        v = certify(g, P).violation
        assert exact <= v / (1 - rho) + 1e-300
        assert v - exact <= 8 * rho, (target, v, exact)
        assert certify(g, P).certified is (target < 0)


def test_tol_cannot_loosen_the_certificate(tmp_path):
    P = PrivacyParams(15, 7, 4.0, 0.0)
    g = np.ones(16)
    for bad in (1e-12, 1.0, float("nan"), float("inf"), True, "x"):
        with pytest.raises(ParameterError, match="tol"):
            certify(g, P, tol=bad)
        with pytest.raises(ParameterError, match="tol"):
            gamma_file.save(GammaTable(P, g, "custom", violation=0.0), tmp_path / "t.json", tol=bad)
        with pytest.raises(ParameterError, match="tol"):
            certify_disjoint(np.ones(12), DisjointParams(11, NonPrivate(), 1.0, 0.0), tol=bad)
    assert not (tmp_path / "t.json").exists()
    # a stricter threshold is allowed
    t = solve_gamma_opt(PrivacyParams(11, 3, 0.1, 1e-5), progress=False)
    assert certify(t.gamma, t.params, tol=-1e-15).certified in (True, False)
    assert not certify(t.gamma, t.params, tol=-1.0).certified


@pytest.mark.parametrize("bad,field", [
    ("NaN", "gamma[3]"), ("Infinity", "gamma[3]"), ("-Infinity", "gamma[3]"),
])
def test_gamma_files_with_non_finite_numbers_exit_2_naming_the_field(tmp_path, bad, field):
    t = solve_gamma_opt(PrivacyParams(11, 3, 0.1, 1e-5), progress=False)
    d = gamma_file.table_to_dict(t)
    d["gamma"][3] = float(bad.lower().replace("infinity", "inf"))
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(d))  # Python's json writes NaN / Infinity / -Infinity
    r = _cli("verify", str(path))
    assert r.returncode == 2 and field in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("mutate,word", [
    (lambda d: d.update(info=[1, 2]), "info"),
    (lambda d: d.update(gamma="abc"), "gamma"),
    (lambda d: d.update(gamma=[True] * 12), "gamma"),
    (lambda d: d.update(violation="x"), "violation"),
    (lambda d: d.update(K=10**9), "gamma"),
])
def test_gamma_files_with_wrong_types_or_sizes_exit_2(tmp_path, mutate, word):
    t = solve_gamma_opt(PrivacyParams(11, 3, 0.1, 1e-5), progress=False)
    d = gamma_file.table_to_dict(t)
    mutate(d)
    d["checksum"] = gamma_file.checksum(d)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(d))
    r = _cli("verify", str(path))
    assert r.returncode == 2 and word in r.stderr and "Traceback" not in r.stderr


def test_deeply_nested_gamma_file_exits_2(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    r = _cli("verify", str(path))
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_in_place_pair_violation_is_the_formula_bit_for_bit():
    """The numpy fast path of pair_violation (two buffers, in place) performs the operations of
    max(P_a − e·P_b, P_b − e·P_a) − δ + slack in the same order: every v̂ is bit for bit the same,
    so the rigorous verdict of darrm.privacy.condition is unchanged."""
    from darrm.privacy.condition import pair_violation

    rng = np.random.default_rng(7)
    for K, m, eps, Delta in ((101, 10, 0.1, 0.0), (41, 3, 0.5, 1e-5)):
        chk = PrivacyParams(K, m, eps, Delta).check
        a = rng.uniform(size=(64, 257)) ** 9
        near = a * np.exp(-rng.uniform(0, 1, a.shape))  # pairs near the e^ε boundary, and random ones
        b = np.where(rng.uniform(size=a.shape) < 0.5, near, rng.uniform(size=a.shape))
        formula = np.maximum(a - chk.e * b, b - chk.e * a) - chk.delta + chk.slack
        got = pair_violation(a, b, chk)
        assert got.dtype == np.float64 and np.array_equal(got, formula)
        assert np.array_equal(pair_violation(a, b, chk), pair_violation(a[None], b[None], chk)[0])
