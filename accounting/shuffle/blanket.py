"""Privacy blanket (Balle, Bell, Gascón, Nissim, CRYPTO 2019): Hoeffding and Bennett bounds.

δ(ε) <= (1/(γ n)) E_{M~Bin(n,γ)} E[(Σ_{i<=M} L_i)_+] (BBGN19 Lemma 5.3 = Su et al.
Lemma 3), with the privacy amplification random variable L bounded by
concentration inequalities.  Transcribed from the authors' ``shuffleddp`` code
(Balle et al. 2019, the privacy blanket), a = e^ε - 1:

* Hoeffding: δ = (1/(γ n)) (b²/(4a)) (1 - γ(1 - e^{-2a²/b²}))^n, b = range of L;
* Bennett: δ = (1/(γ n)) (b₊/ln(1+β_B)) [(1-γ+γe^{-α_B φ(β_B)})^n - (1-γ)^n],
  b₊ = max L, c = Var L, α_B = c/b₊², β_B = a b₊/c, φ(u) = (1+u)ln(1+u) - u
  (the binomial sum of the code in closed form).

"generic" constants (γ = e^{-ε0}) hold for every ε0-LDP randomizer; the k-RR
constants (γ = k/(e^{ε0}+k-1)) for k-ary RR only.  Computed in log space; the
code's floor δ >= 1e-11 is not applied (it is an artefact, not part of the theorem).
"""

from __future__ import annotations

import math

from darrm import validation as v

from .bound import Bound, eps_for_delta
from .randomizers import RandomizedResponse, Randomizer


def _constants(randomizer: Randomizer, eps: float) -> tuple[float, float, float, float]:
    """(γ, max L, range L, Var-type bound) of shuffleddp's mechanism classes."""
    e0 = randomizer.eps0
    ee = math.exp(eps)
    if isinstance(randomizer, RandomizedResponse):
        k = randomizer.k
        g = k / (math.exp(e0) + k - 1)
        mx = g * (1 - ee) + (1 - g) * k
        rng = (1 - g) * k * (ee + 1)
        var = g * (2 - g) * (ee - 1) ** 2 + (1 - g) ** 2 * k * (ee * ee + 1)
        return g, mx, rng, var
    g_lb, g_ub = math.exp(-e0), 1.0
    mx = g_ub * math.exp(e0) * (1 - math.exp(eps - 2 * e0))
    rng = g_ub * (ee + 1) * (math.exp(e0) - math.exp(-e0))
    var = g_ub * (math.exp(e0) * (ee * ee + 1) - 2 * g_lb * math.exp(eps - 2 * e0))
    return g_lb, mx, rng, var


def hoeffding_delta(randomizer: Randomizer, n: int, eps: float) -> float:
    if eps >= randomizer.eps0:
        return 0.0
    if eps <= 0:
        return 1.0
    g, _, b, _ = _constants(randomizer, eps)
    a = math.expm1(eps)
    log_d = (
        -math.log(g * n)
        + 2 * math.log(b)
        - math.log(4 * a)
        + n * math.log1p(-g * (-math.expm1(-2 * a * a / (b * b))))
    )
    return min(1.0, math.exp(log_d))


def bennett_delta(randomizer: Randomizer, n: int, eps: float) -> float:
    if eps >= randomizer.eps0:
        return 0.0
    if eps <= 0:
        return 1.0
    g, bp, _, c = _constants(randomizer, eps)
    a = math.expm1(eps)
    alpha_b = c / (bp * bp)
    beta_b = a * bp / c
    phi = (1 + beta_b) * math.log1p(beta_b) - beta_b
    if phi <= 0:  # rounding for tiny β_B, as in the reference code
        phi = beta_b * beta_b
    t = alpha_b * phi
    log_all = n * math.log1p(-g * (-math.expm1(-t)))
    log_none = n * math.log1p(-g)
    # log[(1-γ+γe^{-t})^n - (1-γ)^n]
    log_sum = log_all + math.log1p(-math.exp(log_none - log_all)) if log_none < log_all else -math.inf
    log_d = -math.log(g * n) + math.log(bp) - math.log(math.log1p(beta_b)) + log_sum
    return min(1.0, math.exp(log_d)) if math.isfinite(log_d) else 0.0


#: the two variants' names in :data:`~darrm.accounting.shuffle.best.METHODS` and in every Bound
NAMES = {"hoeffding": "blanket-hoeffding", "bennett": "blanket-bennett"}


def _note(randomizer: Randomizer, which: str) -> str:
    form = "k-RR constants" if isinstance(randomizer, RandomizedResponse) else "generic eps0-LDP constants"
    return f"privacy blanket (BBGN19), {which} bound, {form}"


def delta_bound(randomizer: Randomizer, n: int, eps: float, which: str = "hoeffding") -> Bound:
    eps, n = v.epsilon("eps", eps, allow_zero=True), v.count("n", n)
    f = hoeffding_delta if which == "hoeffding" else bennett_delta
    return Bound(NAMES[which], "upper", True, eps, f(randomizer, n, eps), _note(randomizer, which))


def eps_bound(randomizer: Randomizer, n: int, delta: float, which: str = "hoeffding") -> Bound:
    delta, n = v.open_unit("delta", delta), v.count("n", n)
    f = hoeffding_delta if which == "hoeffding" else bennett_delta
    e = eps_for_delta(lambda x: f(randomizer, n, x), delta, randomizer.eps0, "upper")
    return Bound(NAMES[which], "upper", True, e, delta, _note(randomizer, which))
