"""Multi-message protocols and metric LDP in the shuffle model, against exact small-n references.

The references enumerate every neighbouring pair of datasets (every ordered victim pair, every
multiset of the other users' inputs) and every histogram of the shuffled messages in exact rational
arithmetic (``fractions``); e^ε is rational, so δ(ε) = Σ_h (P(h) − e^ε Q(h))_+ is exact.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from fractions import Fraction as F

import numpy as np
import pytest

from darrm.accounting.shuffle import decomposition as D
from darrm.accounting.shuffle import metric_ldp as ml
from darrm.accounting.shuffle import multi_message as mm
from darrm.accounting.shuffle.bound import NotApplicable
from darrm.errors import ParameterError

E_RATIOS = [F(1), F(9, 8), F(3, 2), F(2), F(3)]  # e^ε, so ε = ln of each


def _hist(rows: list[list[F]]) -> dict[tuple[int, ...], F]:
    """Exact law of the histogram of independent messages with the given output laws."""
    d = len(rows[0])
    dist: dict[tuple[int, ...], F] = {(0,) * d: F(1)}
    for row in rows:
        new: dict[tuple[int, ...], F] = defaultdict(F)
        for h, p in dist.items():
            for y, q in enumerate(row):
                if q:
                    h2 = list(h)
                    h2[y] += 1
                    new[tuple(h2)] += p * q
        dist = new
    return dist


def _hockey(p: dict, q: dict, e: F) -> F:
    return sum((max(p.get(h, F(0)) - e * q.get(h, F(0)), F(0)) for h in set(p) | set(q)), F(0))


def _exact(rows: list[list[F]], n: int, e: F, pairs, extra: list[list[F]]) -> F:
    """max over the victim pairs and every multiset of the others' inputs of both directions'
    divergence; ``extra``: messages every dataset adds (the blankets)."""
    best = F(0)
    for others in itertools.combinations_with_replacement(range(len(rows)), n - 1):
        base = [rows[x] for x in others] + extra
        for a, b in pairs:
            p, q = _hist([rows[a]] + base), _hist([rows[b]] + base)
            best = max(best, _hockey(p, q, e), _hockey(q, p, e))
    return best


def _protocol_exact(local: list[list[F]], blanket: list[F], blankets: int, n: int, e: F) -> F:
    k = len(local)
    pairs = [(a, b) for a in range(k) for b in range(k) if a != b]
    return _exact(local, n, e, pairs, [blanket] * (n * blankets))


def _as_float(m: list[list[F]]) -> list[list[float]]:
    return [[float(x) for x in row] for row in m]


# ---------------------------------------------------------------------------------- multi-message

_Q = F(1, 4)
PROTOCOLS = {
    # Balcer & Cheu binary sum: the bit in the clear plus Bernoulli(1/4) coins
    "binary-sum": ([[F(1), F(0)], [F(0), F(1)]], [1 - _Q, _Q]),
    # mixDUMP-like: 3-RR with e^{ε0} = 2 plus uniform blankets
    "3rr-uniform": ([[F(1, 2), F(1, 4), F(1, 4)], [F(1, 4), F(1, 2), F(1, 4)], [F(1, 4), F(1, 4), F(1, 2)]],
                    [F(1, 3)] * 3),
    # an asymmetric matrix whose blanket is a mixture (weights 1/2, 1/4, 1/4) of its rows
    "mixture": ([[F(1, 2), F(1, 3), F(1, 6)], [F(1, 6), F(2, 3), F(1, 6)], [F(1, 5), F(1, 5), F(3, 5)]],
                [F(17, 60), F(47, 120), F(13, 40)]),
}


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
@pytest.mark.parametrize("blankets,n", [(1, 1), (1, 2), (1, 3), (2, 2)])
def test_multi_message_bounds_bracket_the_exact_protocol(name, blankets, n):
    local, blanket = PROTOCOLS[name]
    if name == "binary-sum" and blankets == 1:
        n = n + 1  # the one-output-per-bit protocol stays tiny: go one user further
    proto = mm.as_protocol(_as_float(local), [float(x) for x in blanket], blankets)
    for e in E_RATIOS:
        exact = _protocol_exact(local, blanket, blankets, n, e)
        up = mm.upper_delta(proto, n, math.log(e))
        lo = mm.lower_delta(proto, n, math.log(e))
        assert lo <= float(exact) <= up, (name, n, e, lo, float(exact), up)


def test_binary_sum_bound_is_exact():
    """The input-dependent message is deterministic: the reduced pair is attained, upper = exact = lower
    up to the count sums' rounding allowances (relative RHO = 1e-9 on the magnitude of each side)."""
    local, blanket = PROTOCOLS["binary-sum"]
    proto = mm.binary_sum(0.25, 2)
    for e in E_RATIOS[:3]:
        exact = float(_protocol_exact(local, blanket, 2, 3, e))
        up, lo = mm.upper_delta(proto, 3, math.log(e)), mm.lower_delta(proto, 3, math.log(e))
        assert lo <= exact <= up and up - lo <= 1e-7 * exact


def test_counting_every_message_as_a_blanket_is_caught():
    """A broken upper bound (the others' input-dependent bits counted as blanket coins, N = n(b + 1)
    summands instead of n·b + 1) falls below the exact protocol: the reference catches it."""
    local, blanket = PROTOCOLS["binary-sum"]
    proto = mm.binary_sum(0.25, 1)
    n = 3
    caught = []
    for e in E_RATIOS:
        broken = mm._delta(proto, n * (proto.blankets + 1), math.log(e), "upper")
        caught.append(broken < float(_protocol_exact(local, blanket, 1, n, e)))
    assert any(caught)


def test_multi_message_eps_bounds_are_ordered_and_exact_for_the_binary_sum():
    proto = mm.binary_sum(0.5, 1)
    up, lo = mm.bounds(proto, 2000, 1e-6)
    assert up.kind == "upper" and lo.kind == "lower" and lo.eps <= up.eps <= 1.0001 * lo.eps
    assert mm.upper_delta(proto, 2000, up.eps) <= 1e-6 < mm.lower_delta(proto, 2000, lo.eps)


def test_multi_message_refuses_bad_input():
    with pytest.raises(ParameterError, match="blanket"):
        mm.as_protocol([[1.0, 0.0], [0.0, 1.0]], [1.0, 0.0], 1)
    with pytest.raises(ParameterError, match="blankets"):
        mm.binary_sum(0.5, 0)
    with pytest.raises(ParameterError, match="local"):
        mm.as_protocol([[0.5, 0.5], [0.5, 0.5]], [0.5, 0.5], 1)
    with pytest.raises(ParameterError, match="coin"):
        mm.binary_sum(1.0, 1)


def test_lower_bound_refused_without_an_exact_dataset_pair():
    # B outside the rows' hull, no deterministic row, no symmetric classes, three outputs
    proto = mm.as_protocol([[0.6, 0.3, 0.1], [0.3, 0.5, 0.2], [0.2, 0.2, 0.6]], [0.05, 0.05, 0.9], 1)
    up, lo = mm.bounds(proto, 50, 1e-3)
    assert up.valid and not lo.valid and "mixture" in lo.note
    # with two outputs the datasets "all others at one input" are always available
    two = mm.as_protocol([[0.6, 0.4], [0.4, 0.6]], [0.9, 0.1], 1)
    up, lo = mm.bounds(two, 50, 1e-3)
    assert up.valid and lo.valid and 0 < lo.eps <= up.eps


# ------------------------------------------------------------------------------------- metric LDP

def _geometric_exact(k: int, a: F) -> list[list[F]]:
    """R(x)(y) of clamp(x + Z, 0, k−1), P(Z = z) = c·a^{|z|}, c = (1−a)/(1+a), from the definition:
    the clamped ends collect the geometric tails Σ_{j>=m} c·a^j = c·a^m/(1−a)."""
    c = (1 - a) / (1 + a)
    rows = []
    for x in range(k):
        row = [c * a ** abs(y - x) for y in range(k)]
        row[0] = c * a ** x / (1 - a)
        row[-1] = c * a ** (k - 1 - x) / (1 - a)
        rows.append(row)
    return rows


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_metric_pair_bounds_bracket_the_exact_pair(n):
    k, a = 4, F(1, 2)
    exact_m = _geometric_exact(k, a)
    assert all(sum(r) == 1 for r in exact_m)
    mr = ml.geometric_line(k, math.log(2))
    np.testing.assert_allclose(mr.randomizer.array, _as_float(exact_m), rtol=1e-14)
    for x0, x1 in [(0, 1), (1, 2), (0, 2), (1, 3), (0, 3)]:
        for e in E_RATIOS:
            exact = _exact(exact_m, n, e, [(x0, x1)], [])
            up = ml.pair_delta(mr, n, x0, x1, math.log(e), "upper")
            lo = ml.pair_delta(mr, n, x0, x1, math.log(e), "lower")
            assert lo <= float(exact) <= up, (n, x0, x1, e, lo, float(exact), up)


def test_metric_bounds_grow_with_distance_and_vanish_beyond_it():
    mr = ml.geometric_line(5, 0.5)
    prof = ml.distance_profile(mr, 6, 1e-2)
    assert [p.distance for p in prof] == [1.0, 2.0, 3.0, 4.0]
    for p in prof:
        assert p.lower.eps <= p.upper.eps <= 0.5 * p.distance
    ups = [p.upper.eps for p in prof]
    assert ups == sorted(ups)
    assert ml.pair_delta(mr, 6, 0, 2, 0.5 * 2, "upper") == 0.0


def test_pair_only_blanket_is_caught():
    """A broken bound whose blanket is the minimum over the victim's two inputs only (instead of every
    input) falls below the exact divergence for a far filler: the reference catches it."""
    k, a = 4, F(1, 2)
    exact_m = _geometric_exact(k, a)
    m = np.array(_as_float(exact_m))
    caught = []
    for n in (2, 3):
        for e in E_RATIOS[:3]:
            sub = m[[1, 2]]
            at = D.blanket_atoms(sub, 0, 1)
            broken = max(D.positive_part(at.values(math.log(e)), at.w, n, "upper")[0],
                         D.positive_part(D.blanket_atoms(sub, 1, 0).values(math.log(e)),
                                         D.blanket_atoms(sub, 1, 0).w, n, "upper")[0]) / n
            caught.append(broken < float(_exact(exact_m, n, e, [(1, 2)], [])))
    assert any(caught)


def test_metric_randomizer_is_checked_and_grid_is_l1_private():
    mr = ml.geometric_line(3, 1.0)
    with pytest.raises(ParameterError, match="eps_unit"):
        ml.MetricRandomizer(mr.randomizer, mr.distance, 0.9)  # claims more privacy than it has
    with pytest.raises(ParameterError, match="distance"):
        ml.MetricRandomizer(mr.randomizer, ((0, 1, 2), (1, 0, 1), (2, 2, 0)), 1.0)
    g = ml.geometric_grid(2, 3, 0.7)
    lr = np.log(g.randomizer.array[:, None, :] / g.randomizer.array[None, :, :]).max(axis=2)
    d = np.array(g.distance)
    assert np.all(lr <= 0.7 * d + 1e-12) and np.isclose(lr[0, 5], 0.7 * 3)
    with pytest.raises(ParameterError, match="x1"):
        ml.pair_delta(mr, 3, 1, 1, 0.1)


def test_metric_pair_bounds_on_the_grid_path_bracket_the_exact_pair(monkeypatch):
    """The same bracket with the enumeration switched off, so the rounded grids of
    :func:`decomposition.positive_part` evaluate it."""
    from darrm.accounting.shuffle import small_sums

    monkeypatch.setattr(small_sums, "MAX_COUNT_VECTORS", 0)
    exact_m = _geometric_exact(4, F(1, 2))
    mr = ml.geometric_line(4, math.log(2))
    e = F(3, 2)
    exact = float(_exact(exact_m, 3, e, [(0, 2)], []))
    assert ml.pair_delta(mr, 3, 0, 2, math.log(e), "lower") <= exact <= ml.pair_delta(mr, 3, 0, 2, math.log(e))


# ----------------------------------------------------------------------------------- command line

def _cli(argv, capsys):
    import argparse

    from darrm.accounting.cli.shuffle import register

    p = argparse.ArgumentParser()
    register(p.add_subparsers())
    args = p.parse_args(argv)
    return args.func(args), capsys.readouterr().out


def test_specs_build_the_library_protocols():
    from darrm.accounting.shuffle import RandomizedResponse
    from darrm.accounting.shuffle.randomizer_spec import parse_randomizer

    spec = parse_randomizer("rr:3+2")
    assert spec.own_bounds and spec.label == "rr:3+2"
    assert spec.build_protocol(1.0) == mm.uniform_blankets(RandomizedResponse(1.0, 3), 2)
    geo = parse_randomizer("geo:4").build_protocol(0.5)
    np.testing.assert_array_equal(geo.randomizer.array, ml.geometric_line(4, 0.5).randomizer.array)
    assert parse_randomizer("grid:3").build_protocol(0.5).n_inputs == 9
    with pytest.raises(ParameterError, match="own bounds") as exc:
        spec.build(1.0)  # not a single-message randomizer: rounds/target/plot refuse it
    assert exc.value.parameter == "randomizer"


@pytest.mark.parametrize("text,match", [
    ("rr:3+0", "B >= 1"), ("rr:3+", "expected"), ("rr:3+x", "expected"), ("generic+2", "specific"),
    ("rr:2@0.5+1", "without @RATE"), ("geo:3@0.5", "no @RATE"), ("grid:5", r"\[2, 4\]"), ("geo", "number of inputs"),
    ("geo:3+1", "specific"),
])
def test_bad_protocol_specs_name_the_randomizer(text, match):
    from darrm.accounting.shuffle.randomizer_spec import parse_randomizer

    with pytest.raises(ParameterError, match=match) as exc:
        parse_randomizer(text)
    assert exc.value.parameter == "randomizer"


def test_cli_protocol_json_is_the_library_bounds(capsys):
    import json

    from darrm.json_vocabulary import VOCABULARY

    rc, out = _cli(["shuffle", "--n", "50", "--eps0", "1", "--delta", "1e-3", "--randomizer", "rr:2+1", "--json"],
                   capsys)
    recs = json.loads(out)
    assert rc == 0 and {k for r in recs for k in r} <= VOCABULARY
    from darrm.accounting.shuffle import RandomizedResponse

    lib = mm.bounds(mm.uniform_blankets(RandomizedResponse(1.0, 2), 1), 50, 1e-3)
    assert [(r["kind"], r["epsilon"], r["blankets"]) for r in recs] == [(b.kind, b.eps, 1) for b in lib]
    rc, out = _cli(["shuffle", "--n", "5", "--eps0", "1", "--delta", "1e-2", "--randomizer", "geo:3", "--json"],
                   capsys)
    recs = json.loads(out)
    assert rc == 0 and {k for r in recs for k in r} <= VOCABULARY
    assert sorted({r["distance"] for r in recs}) == [1.0, 2.0]
    for extra in (["--rounds", "2"], ["--plot", "x.png"]):
        with pytest.raises(ParameterError):
            _cli(["shuffle", "--n", "5", "--eps0", "1", "--delta", "1e-2", "--randomizer", "geo:3", *extra], capsys)


def test_binary_sum_matches_the_variation_ratio_limit_and_beats_it_for_a_biased_coin():
    """Balcer et al.'s uniform coin (Wang et al. Table 4: p = ∞, β = 1, q = 2, so every blanket is a
    clone): the reduced pair is Wang et al.'s Thm 4.7 pair, and δ(ε) at 10000 blankets matches the
    reference values 4.1148901e-05 (ε = 0.05) and 1.1431934e-09 (ε = 0.1) and the variation-ratio
    core to 1e-7 relative.  For a biased coin (q = 1/0.2) Table 4's parameters only bound our exact
    reduced pair from above."""
    import math

    from darrm.accounting.shuffle.variation_ratio import VRParams, vr_delta

    fair = mm.binary_sum(0.5, 1)
    for eps, ref in ((0.05, 4.1148901e-05), (0.1, 1.1431934e-09)):
        up, lo = mm.upper_delta(fair, 10_000, eps), mm.lower_delta(fair, 10_000, eps)
        assert lo <= up and up == pytest.approx(ref, rel=1e-7)
        assert vr_delta(eps, 10_001, VRParams(math.inf, 1.0, 2.0)) == pytest.approx(up, rel=1e-7)
    biased = mm.binary_sum(0.2, 3)
    for eps in (0.05, 0.1, 0.2):
        assert mm.upper_delta(biased, 3000, eps) < vr_delta(eps, 3 * 3000 + 1, VRParams(math.inf, 1.0, 5.0))


# ------------------------------------------------ k-RR with uniform blankets: the tighter bracket

def _krr(k: int, ratio: F) -> list[list[F]]:
    """k-RR with e^{ε0} = ratio, exactly."""
    q = 1 / (ratio + k - 1)
    return [[ratio * q if x == y else q for y in range(k)] for x in range(k)]


def _mixture_average(k: int, ratio: F, blankets: int, n: int, e: F) -> F:
    """E_{M ~ Bin(n−1, kq)} of the exact divergence of the victim's message (x0 vs x1) among
    n·b + M uniform messages: the value the module's blanket-share upper bound rounds up,
    computed from the definitions (every histogram) in rational arithmetic."""
    rows = _krr(k, ratio)
    gamma = k / (ratio + k - 1)
    uni = [F(1, k)] * k
    total = F(0)
    for m in range(n):
        fill = [uni] * (n * blankets + m)
        d = _hockey(_hist([rows[0]] + fill), _hist([rows[1]] + fill), e)
        total += math.comb(n - 1, m) * gamma ** m * (1 - gamma) ** (n - 1 - m) * d
    return total


KRR_CASES = [(3, F(2), 1, 2), (3, F(2), 2, 2), (3, F(3), 1, 3), (4, F(2), 1, 2), (4, F(3), 1, 3), (4, F(2), 2, 2)]


@pytest.mark.parametrize("k,ratio,blankets,n", KRR_CASES)
def test_krr_blanket_bounds_bracket_the_exact_protocol_and_the_share_average(k, ratio, blankets, n):
    """lower <= exact worst case over every dataset pair <= E_M[δ_{N+M}] (the blanket-share claim,
    checked in rationals) <= the float upper bound <= the plain upper bound."""
    from darrm.accounting.shuffle import RandomizedResponse

    local = _krr(k, ratio)
    proto = mm.uniform_blankets(RandomizedResponse(math.log(ratio), k), blankets)
    np.testing.assert_allclose(proto.array, _as_float(local), rtol=1e-14)
    for e in E_RATIOS:
        eps = math.log(e)
        exact = _protocol_exact(local, [F(1, k)] * k, blankets, n, e)
        avg = _mixture_average(k, ratio, blankets, n, e)
        up, plain = mm.upper_delta(proto, n, eps), mm.plain_upper_delta(proto, n, eps)
        lo, count = mm.lower_delta(proto, n, eps), mm.count_lower_delta(proto, n, eps)
        assert count <= lo <= float(exact) <= float(avg) <= up <= plain, (k, n, e, lo, exact, avg, up, plain)


@pytest.mark.parametrize("ratio,blankets,n", [(F(2), 1, 2), (F(3), 1, 3), (F(2), 2, 2)])
def test_krr_count_lower_bound_is_the_exact_divergence_for_three_inputs(ratio, blankets, n):
    """k = 3: the counts (N_x0, N_x1) determine the histogram, so the count lower bound is the exact
    divergence of the dataset (x0 | x2, ..., x2) vs (x1 | x2, ..., x2), computed here from every
    histogram, up to its rounding charges (relative 1e-7)."""
    from darrm.accounting.shuffle import RandomizedResponse

    local = _krr(3, ratio)
    proto = mm.uniform_blankets(RandomizedResponse(math.log(ratio), 3), blankets)
    base = [local[2]] * (n - 1) + [[F(1, 3)] * 3] * (n * blankets)
    for e in E_RATIOS:
        exact = float(_hockey(_hist([local[0]] + base), _hist([local[1]] + base), e))
        got = mm.count_lower_delta(proto, n, math.log(e))
        assert got <= exact and got == pytest.approx(exact, rel=1e-7, abs=1e-15)


def test_broken_blanket_share_and_count_variants_are_caught():
    """Two deliberately broken variants fall on the wrong side of the exact protocol: the upper bound
    with every other message counted as a blanket (M = n − 1 instead of M ~ Bin(n − 1, kq)) and the
    count lower bound without the victim's own blankets (C ~ Bin(n − 1, 2q) + Bin((n − 1)·b, 2/k))."""
    from darrm.accounting.shuffle import RandomizedResponse
    from darrm.accounting.shuffle.variation_ratio import VRParams, vr_delta
    from darrm.numerics.binomial_sum import binomial_sum_law

    k, ratio, b, n = 4, F(3), 1, 3
    local = _krr(k, ratio)
    proto = mm.uniform_blankets(RandomizedResponse(math.log(ratio), k), b)
    q = 1 / (3 + k - 1)
    up_caught, lo_caught = [], []
    for e in E_RATIOS[:4]:
        exact = float(_protocol_exact(local, [F(1, k)] * k, b, n, e))
        broken_up = mm._delta(proto, n * b + 1 + (n - 1), math.log(e), "upper")
        law = binomial_sum_law(((n - 1, 2 * q), ((n - 1) * b, 2 / k)))
        broken_lo = vr_delta(math.log(e), n, VRParams(3.0, 2 * q, 3.0), kind="lower", count_law=law)
        up_caught.append(broken_up < exact)
        lo_caught.append(broken_lo > exact)
        assert mm.lower_delta(proto, n, math.log(e)) <= exact <= mm.upper_delta(proto, n, math.log(e))
    assert any(up_caught) and any(lo_caught)


@pytest.mark.parametrize("k", [3, 4, 10])
def test_krr_blanket_bracket_only_tightens_on_a_grid(k):
    """On a grid (b = 1, 2; n = 50, 2000; ε0 = 1, 3; four ε) the new lower bound is >= the mixture
    lower bound, the new upper bound <= the plain one, and lower <= upper."""
    from darrm.accounting.shuffle import RandomizedResponse

    for e0 in (1.0, 3.0):
        for b in (1, 2):
            proto = mm.uniform_blankets(RandomizedResponse(e0, k), b)
            for n in (50, 2000):
                for eps in (0.02, 0.1, 0.3, 0.8):
                    resid = mm._candidates(proto)[1]  # the mixture bound as before, with its residual charge
                    old_lo = max(0.0, mm._delta(proto, n * (b + 1), eps, "lower")
                                 - (1 + math.exp(eps)) * (n - 1) * resid / 2)
                    lo, up = mm.lower_delta(proto, n, eps), mm.upper_delta(proto, n, eps)
                    assert old_lo <= lo <= up <= mm.plain_upper_delta(proto, n, eps), (e0, b, n, eps)


def test_blanket_share_of_the_library_protocols():
    from darrm.accounting.shuffle import RandomizedResponse

    assert mm.blanket_share(mm.binary_sum(0.3, 2)) == 0.0
    p = mm.uniform_blankets(RandomizedResponse(1.0, 4), 1)
    assert mm.blanket_share(p) == pytest.approx(4 / (math.e + 3), rel=1e-11) and mm.blanket_share(p) < 4 / (math.e + 3)
    with pytest.raises(NotApplicable, match="filler input outside"):
        mm.count_lower_delta(mm.binary_sum(0.3, 2), 10, 0.1)


def _oue_exact(k: int, r: F) -> list[list[F]]:
    """OUE rows, exactly: output y = a k-bit vector, the input's bit is 1 w.p. 1/2, every other w.p. r."""
    rows = []
    for x in range(k):
        row = []
        for y in range(1 << k):
            pr = F(1)
            for j in range(k):
                bit = (y >> j) & 1
                pj = F(1, 2) if j == x else r
                pr *= pj if bit else 1 - pj
            row.append(pr)
        rows.append(row)
    return rows


@pytest.mark.parametrize("n,blankets", [(1, 1), (2, 1)])
def test_oue_with_blankets_has_a_lower_bound_bracketing_the_exact_protocol(n, blankets):
    """OUE (k = 3, e^{ε0} = 3) with uniform blankets: the count lower bound (classes: bit x0 set and bit
    x1 clear, and the mirror) now exists; lower <= exact worst case over every dataset pair <= upper,
    and the upper bound <= the plain one (equal here: OUE's GPARVs have more than three atoms)."""
    from darrm.accounting.shuffle import oue

    local = _oue_exact(3, F(1, 4))
    rand = oue(3, math.log(3))
    proto = mm.uniform_blankets(rand, blankets)
    np.testing.assert_allclose(np.array(_as_float(local)), proto.array, rtol=1e-13)  # same output order
    assert mm._count_pairs(proto) and all(cp.star == pytest.approx(3 / 16) for cp in mm._count_pairs(proto))
    for e in E_RATIOS[1:4]:  # e^ε < e^{ε0} = 3: δ > 0
        exact = float(_protocol_exact(local, [F(1, 8)] * 8, blankets, n, e))
        lo, up = mm.lower_delta(proto, n, math.log(e)), mm.upper_delta(proto, n, math.log(e))
        assert 0 < lo <= exact <= up <= mm.plain_upper_delta(proto, n, math.log(e)), (n, e, lo, exact, up)


@pytest.mark.parametrize("ratio,blankets,n", [(F(2), 1, 2), (F(3), 1, 3), (F(2), 2, 3), (F(5), 1, 4)])
def test_two_output_lower_bound_is_the_exact_divergence_of_its_datasets(ratio, blankets, n):
    """Binary RR with uniform blankets, n <= SPLIT_EXACT_N: the two-output lower bound evaluates every
    split, so it equals the exact δ over every dataset pair (every histogram, rationals) up to its
    rounding charges (relative 1e-7: about 2·PMF_RHO·(1 + e^ε)/δ); lower <= exact <= upper, and
    exact <= E_M[δ_{N+M}] <= the blanket-share bound."""
    from darrm.accounting.shuffle import RandomizedResponse

    local = _krr(2, ratio)
    half = [F(1, 2)] * 2
    proto = mm.uniform_blankets(RandomizedResponse(math.log(ratio), 2), blankets)
    for e in E_RATIOS[:4]:
        eps = math.log(e)
        exact = _protocol_exact(local, half, blankets, n, e)
        got = mm.two_output_lower_delta(proto, n, eps)
        assert got <= float(exact) and got == pytest.approx(float(exact), rel=1e-7, abs=1e-15)
        avg = _mixture_average(2, ratio, blankets, n, e)  # the blanket-share claim, in rationals
        assert exact <= avg and float(avg) <= mm._share_upper(proto, n, eps)
        # two inputs and outputs: the upper bound is the smaller of that and the split bound
        assert mm.lower_delta(proto, n, eps) <= float(exact) <= mm.upper_delta(proto, n, eps)


def test_all_others_at_one_input_is_the_exact_divergence_of_that_dataset():
    """Two outputs, three inputs: the two-output lower bound is the largest exact divergence of the
    datasets with all others at one input (rationals; relative 1e-7) and <= the exact protocol."""
    local = [[F(3, 4), F(1, 4)], [F(1, 4), F(3, 4)], [F(1, 2), F(1, 2)]]
    blanket = [F(2, 5), F(3, 5)]
    proto = mm.as_protocol(_as_float(local), [float(x) for x in blanket], 1)
    n = 3
    for e in E_RATIOS[:4]:
        datasets = []
        for xs in range(3):
            base = [local[xs]] * (n - 1) + [blanket] * n
            for a in range(3):
                for b in range(3):
                    if a != b:
                        datasets.append(_hockey(_hist([local[a]] + base), _hist([local[b]] + base), e))
        got = mm.two_output_lower_delta(proto, n, math.log(e))
        assert got <= float(max(datasets)) and got == pytest.approx(float(max(datasets)), rel=1e-7)
        exact = float(_protocol_exact(local, blanket, 1, n, e))
        assert mm.lower_delta(proto, n, math.log(e)) <= exact <= mm.upper_delta(proto, n, math.log(e))


def test_two_output_lower_bound_without_the_victims_blankets_is_caught():
    """A broken two-output bound whose blanket count leaves out the victim's own b blankets
    ((n − 1)·b instead of n·b) exceeds the exact protocol: the reference catches it."""
    from darrm.accounting.shuffle import RandomizedResponse

    ratio, b, n = F(3), 2, 3
    local = _krr(2, ratio)
    proto = mm.uniform_blankets(RandomizedResponse(math.log(3), 2), b)
    caught = []
    for e in E_RATIOS[:4]:
        exact = float(_protocol_exact(local, [F(1, 2)] * 2, b, n, e))
        assert mm._two_output(proto, n, math.log(e), n * b) <= exact
        caught.append(mm._two_output(proto, n, math.log(e), (n - 1) * b) > exact)
    assert any(caught)


TWO_BY_TWO = {
    "binary-rr": ([[F(3, 4), F(1, 4)], [F(1, 4), F(3, 4)]], [F(1, 2), F(1, 2)]),
    "asymmetric": ([[F(7, 10), F(3, 10)], [F(1, 5), F(4, 5)]], [F(3, 5), F(2, 5)]),
}


@pytest.mark.parametrize("name", sorted(TWO_BY_TWO))
@pytest.mark.parametrize("blankets,n", [(1, 2), (1, 4), (2, 3)])
def test_split_upper_bound_is_the_exact_protocol_for_two_inputs_and_outputs(name, blankets, n):
    """Every split evaluated (n <= SPLIT_EXACT_N): the split bound equals the exact δ over every dataset
    pair (rationals) up to its rounding charges (relative 1e-7), and upper_delta is at most it."""
    local, blanket = TWO_BY_TWO[name]
    proto = mm.as_protocol(_as_float(local), [float(x) for x in blanket], blankets)
    for e in E_RATIOS[:4]:
        exact = float(_protocol_exact(local, blanket, blankets, n, e))
        split = mm.split_upper_delta(proto, n, math.log(e))
        assert exact <= split and split == pytest.approx(exact, rel=1e-7, abs=1e-15)
        assert mm.lower_delta(proto, n, math.log(e)) <= exact <= mm.upper_delta(proto, n, math.log(e)) <= split


def test_blocks_of_splits_bound_the_exact_protocol_and_a_broken_block_is_caught(monkeypatch):
    """Blocks of splits (forced: 2 or 3 blocks at n = 5, 6): the bound stays >= the exact protocol; the
    same blocks evaluated with n users instead of n − g + 1 (the block lemma left out) fall below it."""
    local, blanket = TWO_BY_TWO["binary-rr"]
    proto = mm.as_protocol(_as_float(local), [float(x) for x in blanket], 1)
    monkeypatch.setattr(mm, "SPLIT_EXACT_N", 0)
    monkeypatch.setattr(mm, "SPLIT_MIN_BLOCKS", 2)
    caught = []
    for blocks, n in ((2, 5), (3, 6)):
        monkeypatch.setattr(mm, "SPLIT_BLOCKS", blocks)
        assert mm.split_blocks(proto, n) == blocks
        for e in E_RATIOS[:4]:
            exact = float(_protocol_exact(local, blanket, 1, n, e))
            mm._split_laws.cache_clear()
            assert exact <= mm.split_upper_delta(proto, n, math.log(e))
            real = mm._split_starts
            with monkeypatch.context() as mp:
                mp.setattr(mm, "_split_starts", lambda n_, b_, real=real: (real(n_, b_)[0], n_))
                mm._split_laws.cache_clear()
                caught.append(mm.split_upper_delta(proto, n, math.log(e)) < exact)
            mm._split_laws.cache_clear()
    assert any(caught)
    from darrm.accounting.shuffle import oue

    with pytest.raises(NotApplicable, match="two inputs"):
        mm.split_upper_delta(mm.uniform_blankets(oue(3, 1.0), 1), 5, 0.1)
