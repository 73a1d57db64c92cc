"""The largest local ε0 whose shuffled protocol meets a target central ε.

Claim: every valid upper bound ε(ε0) of :mod:`darrm.accounting.shuffle` is non-decreasing in ε0
(a smaller ε0 is a post-processing-closed subclass for the generic class, and each method's
δ(ε) grows with ε0), so {ε0 : ε(ε0) <= target} is an interval (0, ε0*]; the search returns a
point of it that is *checked* to satisfy ε(ε0) <= target (the certified side of
:func:`darrm.numerics.inversion.inverse_monotone`), so the guarantee holds whatever the
monotonicity.
"""

from __future__ import annotations

from darrm import validation as v
from darrm.numerics.inversion import inverse_monotone

from .best import best_upper_bound, randomizer_for
from .composition import ShuffleRound, rounds_epsilon
from .randomizer_spec import RandomizerSpec


def central_epsilon(eps0: float, n: int, delta: float, classes: int | None = None, rounds: int = 1,
                    spec: RandomizerSpec | None = None) -> float:
    """The best valid upper bound on the central ε of ``rounds`` shuffled rounds of ``n`` users
    (generic ε0-LDP randomizer, k-RR with ``classes``, or the randomizer of ``spec``) at total
    ``delta``: one round by :func:`best_upper_bound`, several by :func:`.composition.rounds_epsilon`."""
    rounds = v.count("rounds", rounds)
    r = randomizer_for(eps0, classes, spec)
    if rounds == 1:
        return best_upper_bound(r, n, delta=delta).eps
    return rounds_epsilon([ShuffleRound(r, n, rounds)], delta)


def eps0_for_target(target_eps: float, n: int, delta: float, classes: int | None = None, rounds: int = 1,
                    *, rtol: float = 1e-4, spec: RandomizerSpec | None = None) -> float:
    """The largest ε0 (to relative ``rtol``) with :func:`central_epsilon` <= ``target_eps``.

    Args:
        target_eps: the central ε to meet (> 0).
        n: the number of users.
        delta: the (total) δ.
        classes: None for a generic ε0-LDP randomizer, k for k-ary randomized response.
        rounds: the number of shuffled rounds composed.
        rtol: relative tolerance on ε0.
        spec: the randomizer family instead of ``classes`` (:mod:`.randomizer_spec`).

    Returns:
        ε0 with central_epsilon(ε0) <= target_eps (checked).

    Raises:
        ParameterError: a bad parameter, or ``target_eps`` unreachable even at ε0 = 1e-4
            (names ``target_eps``).
    """
    target_eps = v.epsilon("target_eps", target_eps)
    n = v.count("n", n)
    delta = v.open_unit("delta", delta)
    rounds = v.count("rounds", rounds)
    randomizer_for(1.0, classes, spec)  # refuse a bad spec/classes before the search
    return inverse_monotone(lambda e0: central_epsilon(e0, n, delta, classes, rounds, spec), target_eps, 1e-4,
                            max(1.0, 2 * target_eps), increasing=True, side="certified", geometric=True,
                            rtol=rtol, xtol=1e-12, expand=2.0, limits=(1e-4, 30.0), name="target_eps")
