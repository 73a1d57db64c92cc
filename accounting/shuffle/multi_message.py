"""Multi-message shuffle protocols: one input-dependent message and blanket messages per user.

Wang et al. (variation-ratio, Section 4.3, "Multi-message protocols" and Table 4) treat the
protocols in which every user sends one message R(x) that depends on its input and ``b`` further
messages drawn independently from one fixed distribution B (their "Type II": the binary sums of
Balcer & Cheu 2020 and Balcer et al. 2021, Cheu & Zhilyaev 2022, balls-into-bins, pureDUMP and
mixDUMP).  All n(b + 1) messages are shuffled together.  Their "Type I" (several independent
single-message protocols) is a composition (:mod:`.composition`); their "Type III" (correlated
messages of one user, secret sharing) is out of scope here as it is there.

**Upper bound.**  Claim: for neighbouring datasets (x0, x_2..x_n) and (x1, x_2..x_n) and every
ε ≥ 0,

    D_{e^ε}(shuffled protocol on X^0 ‖ on X^1) <= (1/N) E[(G_1 + ... + G_N)_+],   N = n·b + 1,

with G_i i.i.d., G = (R(x0)(Y) − e^ε R(x1)(Y)) / B(Y), Y ~ B (Su et al.'s generalised privacy
amplification random variable, Def. 9, for the "filler" distribution B).  Proof: (i) the other
users' input-dependent messages are independent of the victim's input and of everything else, so
the shuffled output is a randomized post-processing of the shuffled output without them (add them
and re-shuffle); by the data-processing inequality dropping them can only increase the
divergence.  (ii) What is left is the victim's message R(x_j) and n·b i.i.d. messages from B (the
victim's own blankets included: they are independent of its input), i.e. the single-message
shuffle of N = n·b + 1 "users" where the victim holds x_j and the others all hold a filler input
whose row is B.  (iii) For that dataset pair Su et al. Thm 14 (GKMP20's Lemma, as in
:func:`.decomposition.dataset_atoms`) gives the divergence *exactly* as (1/N) E[(ΣG_i)_+], since
Pr[Mult(N−1, B) = h − e_y] = Pr[Mult(N, B) = h]·h_y/(N·B(y)).  It needs B(y) > 0 wherever
R(x0)(y) or R(x1)(y) is > 0 (checked at construction: otherwise an output of the victim alone
reveals its input and no amplification is possible).  The maximum over ordered pairs (x0, x1)
covers both directions.  E[(ΣG)_+] is bounded from above by :func:`.decomposition.positive_part`
(exact count sums for at most three non-zero atoms, rigorous grids otherwise).

**Lower bound.**  Claim: each of the following is ≤ the protocol's δ(ε) for some actual pair of
neighbouring datasets, hence a valid lower bound:

* a *deterministic* row: if R(x*) is a point mass, the dataset (x_j, x*, ..., x*) adds the same
  known n − 1 messages to both outputs (a bijection of histograms, invertible by the analyser), so
  its divergence *equals* the reduced pair of the upper bound — the two bounds coincide;
* a *blanket-matching mixture*: if some distribution μ over inputs has μᵀR = B, let the other
  users' inputs be i.i.d. ~ μ.  Their messages are then i.i.d. ~ B and the output is the
  single-message shuffle of N' = n(b + 1) users with the victim at x_j and every other at the
  filler: exactly (1/N') E[(ΣG_i)_+] over N' copies of the same G.  This is the divergence of a
  *mixture* of dataset pairs (one per draw of the others' inputs) with the same victim pair, so by
  the joint convexity of the hockey-stick divergence it is ≤ the worst dataset pair's.  μ is found
  by non-negative least squares; the residual r = μᵀR − B actually computed is charged:
  replacing n − 1 laws by B moves each output's law by at most (n − 1)·‖r‖₁/2 in total variation,
  so (1 + e^ε)(n − 1)‖r‖₁/2 is subtracted.

* a *filler outside the victim pair* (e.g. k-RR or OUE, k >= 3, with uniform blankets): the others
  all hold one x* ∉ {x0, x1}.  Let A = {y : R(x0)(y) > R(x1)(y)} and A' = {y : R(x0)(y) < R(x1)(y)}
  (the victim's two classes; k-RR: A = {x0}; OUE: the bit vectors with bit x0 set and bit x1
  clear).  The class counts (N_A, N_A') are a function of the shuffled output, so by the
  data-processing inequality their divergence is <= that dataset pair's.  When the classes are
  symmetric — R(x0)(A) = R(x1)(A') =: pα, R(x0)(A') = R(x1)(A) =: α, R(x*)(A) = R(x*)(A') =: a*,
  B(A) = B(A') =: a_B — their law is Wang et al.'s Thm 4.7 pair (:func:`.variation_ratio.vr_delta`,
  as in the single-message :func:`.variation_ratio.krr_count_lower_delta`, whose k-RR case is
  A = {x0}) with the count C of the non-victim messages in A ∪ A' distributed as
  Bin(n − 1, 2a*) + Bin(n·b, 2a_B) (independent; each such message is in A or A' with
  probability 1/2 each given C, independently — the victim's own blankets are among the n·b),
  and the victim's message in its own class with probability pα, in the other with α, elsewhere
  with the same probability 1 − pα − α under both inputs; the outputs of equal probability under
  R(x0) and R(x1) are in neither class.  k-RR: pα = e^{ε0} q, α = a* = q = 1/(e^{ε0} + k − 1),
  a_B = 1/k; OUE (r = 1/(e^{ε0} + 1)): pα = (1 − r)/2, α = r/2, a* = r(1 − r), a_B = 1/4.
  :class:`darrm.numerics.binomial.CountLaw` carries the convolution's rigorous error terms, subtracted.
  The symmetry is checked to 1e-12 in floating point and the mismatch T (a total variation,
  summed over the messages: the victim's, (n − 1) × the others', n·b × the blankets') is
  charged: changing the class laws moves each output law by at most T, so (1 + e^ε)·T is
  subtracted.  The maximum over the symmetric (x0, x1, x*) is taken.

* *two outputs* (binary RR with blankets, any 2-output protocol): the others all hold one input x*
  (each of the inputs in turn; with two inputs, j of them hold input 1 for the j of
  :func:`_lower_split_laws`, F then Bin(j, u_1) + Bin(n − 1 − j, u_0) + Bin(n·b, B(1))).  The
  output is determined by the count N_y of output y (the total n(b + 1) is fixed), whose law is
  u_j·F(a − 1) + (1 − u_j)·F(a) for the victim at x_j, u_j = R(x_j)(y), F the law of Bin(n − 1,
  R(x*)(y)) + Bin(n·b, B(y)) (the victim's own blankets among the n·b): the divergence Σ_a (P(a) −
  e^ε Q(a))_+ is that dataset pair's, *exactly*.  It is summed over the set S of a where the
  computed P − e^ε Q > 0 (any set gives Σ_S (P − e^ε Q) <= the divergence), F from
  :func:`darrm.numerics.binomial_sum.binomial_sum_law`, and charged as the count bound: e^ε × the law's
  dropped mass, its relative error and the summation's (L + 4)·u (L terms) times Σ_S (P + e^ε Q).

E[(ΣG)_+] is bounded from below by :func:`.decomposition.positive_part` (``kind="lower"``).  When
none of the candidates exists the lower bound is refused (:class:`~.bound.NotApplicable`).

**Two inputs and two outputs (binary RR with blankets): the splits.**  The output is the count
of output 1 (the total is fixed), and a dataset pair is fixed by the number j of the n − 1 others
at input 1, so the exact δ(ε) is max over j and both directions of H_j(n) = D_{e^ε}(Y_j + V_0 ‖
Y_j + V_1), Y_j = Bin(j, u_1) + Bin(n − 1 − j, u_0) + Bin(n·b, B(1)) (u_x = R(x)(1), V_x the
victim's message) — as :mod:`.binary_rr_exact` (i) with the blanket count added.  Blocks of splits
(its lemma, unchanged by blankets): taking out one other user, whose message is Bernoulli(u_x)
independent of everything else, P_j and Q_j are the same mixture of a pair shifted by one and the
pair of n − 1 users (the n·b blankets kept), so by joint convexity and shift invariance
H_j(n) <= H_{j−1}(n − 1) (a 1-holder out) and H_j(n) <= H_j(n − 1) (a 0-holder out); hence
H_j(n) <= H_{j0}(n − g + 1) for j in [j0, j0 + g), j0 <= n − g.  Every split is evaluated up to
:data:`SPLIT_EXACT_N` users, above it at most :data:`SPLIT_BLOCKS` blocks (:func:`split_blocks`).
Each H is bounded from above on the windowed law of
:func:`darrm.numerics.binomial_sum.binomial_sum_law`: with π = π_w + π_out,
(P_π − e^ε Q_π)_+ <= (P_πw − e^ε Q_πw)_+ + P_πout, so ``dropped`` is added, and |w − π_w| <=
rel·w moves each term by at most rel'·(P_w + e^ε Q_w), added over the terms that can be positive
(rel' = rel·1.01 plus the summation's (L + 4)·u).  The upper bound is the minimum of this and the
blanket-share bound (both valid).

**Tighter upper bound: the others' blanket share.**  Let γ = min over inputs x and outputs y
with B(y) > 0 of R(x)(y)/B(y) (k-RR with uniform blankets: γ = k q; the binary sum: γ = 0,
nothing to gain; used where every GPARV has at most three atoms, :func:`_few_atoms`).  Claim: for every dataset pair,

    D_{e^ε} <= E_{M ~ Bin(n − 1, γ)} [δ_{N + M}(ε)],   δ_N(ε) = (1/N) E[(G_1 + ... + G_N)_+],

N = n·b + 1, maximised over the victim pairs as above.  Proof: every other user's message is a
mixture R(x_i) = γ B + (1 − γ) R'_i with R'_i = (R(x_i) − γ B)/(1 − γ) >= 0 (by the choice of
γ < 1; γ = 1 would make all rows equal to B, refused at construction).  Draw, independently of
everything else and of the victim's input, L_i ~ Bernoulli(γ) and the message from B if
L_i = 1, from R'_i otherwise: the output's law is unchanged.  For both datasets of the pair the
output is the same mixture over L = (L_2..L_n) (weights independent of the victim's input), so
by the joint convexity of the hockey-stick divergence D <= E_L[D(P_L ‖ Q_L)].  Given L, the
messages from R'_i are independent of the victim's input and of the rest: dropping them can
only increase the divergence (data-processing inequality, as in (i)), and what is left is the
victim's message among n·b + M i.i.d. B messages, M = Σ L_i ~ Bin(n − 1, γ): exactly
δ_{N+M}(ε) by (ii)–(iii).  δ_N is non-increasing in N (one more independent B message is a
post-processing), so blocks of M are bounded by their lowest M: with a partition of [0, n − 1]
into intervals [a_j, b_j], E_M[δ_{N+M}] <= Σ_j P(M ∈ [a_j, b_j]) δ_{N+a_j}; the interval masses
are computed with their rigorous error (:func:`.count_sums._interval_masses`, added) and each
δ_{N+a_j} bounded from above as before.  The first block starts at M = 0, whose value is the
plain bound: the result is never above it (the minimum with it is returned).  At M ≡ n − 1
(γ = 1) the bound would be δ_{n(b+1)}, the value of the blanket-matching mixture lower bound:
the gap between the two bounds is the others' messages that are not blankets.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from scipy.optimize import nnls

from darrm import validation as v
from darrm.errors import ParameterError
from darrm.numerics.binomial import CountLaw
from darrm.numerics.binomial_sum import binomial_sum_law
from darrm.numerics.inversion import inverse_monotone

from . import count_sums
from .bound import Bound, NotApplicable, eps_for_delta
from .decomposition import Atoms, dataset_atoms, positive_part
from .randomizers import FiniteRandomizer, RandomizedResponse
from .variation_ratio import VRParams, vr_delta

#: the methods' names (every Bound they return carries one)
UPPER_NAME = "multi-message"
LOWER_NAME = "multi-message-lower"
#: an ε search whose δ(ε) never reaches the target below this cap reports ε = ∞ (upper) / the cap (lower)
EPS_CAP = 50.0

_UP_NOTE = ("victim's message among the n*b blanket messages and the others' blanket shares (the others' "
            "messages as mixtures gamma*B + (1-gamma)*R', joint convexity; the R' parts dropped by post-processing); "
            "exact GPARV divergence (Su et al. Thm 14) over N = n*b + 1 + M messages, M ~ Bin(n-1, gamma), "
            "rounded up")
_LO_NOTE_DET = "others at a deterministic input: equals the upper bound's reduced pair"
_LO_NOTE_MIX = ("others' inputs i.i.d. from a mixture whose messages are distributed as the blankets "
                "(joint convexity); GPARV divergence over N' = n*(b + 1) messages, rounded down")
_LO_NOTE_COUNT = ("others at one input (outside the victim pair: exact divergence of the victim's two class counts, "
                  "k-RR: (N_x0, N_x1), Wang et al. Thm 4.7 pair, clone count Bin(n-1, 2a*) + Bin(n*b, 2a_B); two "
                  "outputs: the dataset pair's exact divergence), rounded down; or the blanket-matching mixture "
                  "where it exists, whichever is larger")


def _probability_rows(name: str, m: np.ndarray) -> np.ndarray:
    if not np.all(np.isfinite(m)) or np.any(m < 0):
        raise ParameterError(name, "entries must be finite and >= 0")
    sums = m.sum(axis=-1)
    if np.any(np.abs(sums - 1.0) > 1e-9):
        raise ParameterError(name, f"rows must sum to 1 (got {sums})")
    return m / np.asarray(sums)[..., None]


@dataclass(frozen=True)
class MultiMessageProtocol:
    """Every user sends R(x) and ``blankets`` messages drawn i.i.d. from ``blanket`` (module docstring).

    Unlike a :class:`~.randomizers.FiniteRandomizer`, ``local`` need not be pure LDP (zeros and
    point masses are allowed: the binary sum sends its bit in the clear); the blankets provide the
    privacy.  Validated at construction.

    Attributes:
        local: ``local[x][y]`` = P[R(x) = y], one row per input (>= 2 rows, not all equal).
        blanket: B(y), a probability vector over the same outputs, > 0 wherever a row is > 0.
        blankets: b, the number of blanket messages per user (>= 1).
        label: a short name for tables (default: derived from the sizes).
    """

    local: tuple[tuple[float, ...], ...]
    blanket: tuple[float, ...]
    blankets: int
    label: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        try:
            m = np.array(self.local, dtype=float)
            bl = np.array(self.blanket, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ParameterError("local", f"not a numeric matrix and vector: {exc}") from None
        if m.ndim != 2 or m.shape[0] < 2 or m.shape[1] < 2:
            raise ParameterError("local", f"must be 2-D with >= 2 rows and >= 2 outputs, got shape {m.shape}")
        if bl.shape != (m.shape[1],):
            raise ParameterError("blanket", f"must have one probability per output ({m.shape[1]}), "
                                 f"got shape {bl.shape}")
        m = _probability_rows("local", m)
        bl = _probability_rows("blanket", bl)
        if np.all(np.abs(m - m[0]).max(axis=1) <= 1e-15):
            raise ParameterError("local", "all rows are equal: the messages do not depend on the input")
        uncovered = (bl <= 0) & (m.max(axis=0) > 0)
        if uncovered.any():
            y = int(np.flatnonzero(uncovered)[0])
            raise ParameterError("blanket", f"output {y} has blanket probability 0 but some input sends it: "
                                 "that message alone reveals the input (no amplification)")
        blankets = v.count("blankets", self.blankets)
        object.__setattr__(self, "local", tuple(tuple(float(x) for x in row) for row in m))
        object.__setattr__(self, "blanket", tuple(float(x) for x in bl))
        object.__setattr__(self, "blankets", blankets)
        if not self.label:
            object.__setattr__(self, "label", f"{m.shape[0]}x{m.shape[1]} message + {blankets} blanket(s)")

    @property
    def name(self) -> str:
        """A short label for tables and plots."""
        return f"multi-message {self.label}"

    @property
    def array(self) -> np.ndarray:
        """R as a float array (rows: inputs, columns: outputs)."""
        return np.array(self.local, dtype=float)

    @property
    def extended(self) -> np.ndarray:
        """R with B appended as a last row: the filler input of the reduced single-message shuffle."""
        return np.vstack([self.array, np.array(self.blanket)[None, :]])

    @property
    def log_ratio(self) -> float:
        """ln p: the largest ln(R(x0)(y)/R(x1)(y)) over inputs and outputs (∞ when some R(x1)(y) = 0 < R(x0)(y))."""
        m = self.array
        with np.errstate(divide="ignore", invalid="ignore"):
            r = m[:, None, :] / m[None, :, :]
        r = np.where(m[:, None, :] > 0, r, 0.0)
        top = float(np.max(r))
        return math.inf if math.isinf(top) else math.log(max(top, 1.0))


def binary_sum(coin: float, blankets: int) -> MultiMessageProtocol:
    """Binary summation with blanket coins (Balcer & Cheu 2020; Balcer et al. 2021 for coin = 1/2):
    each user sends its bit x ∈ {0, 1} in the clear and ``blankets`` Bernoulli(coin) bits (Wang et al.
    Table 4: p = ∞, β = 1, q = max(1/coin, 1/(1 − coin))).

    Args:
        coin: P[blanket bit = 1], in (0, 1).
        blankets: blanket bits per user (>= 1).

    Returns:
        The protocol (its bounds are exact: upper = lower, the input-dependent message is deterministic).

    Raises:
        ParameterError: ``coin`` outside (0, 1) or ``blankets`` < 1.
    """
    coin = v.open_unit("coin", coin)
    return MultiMessageProtocol(((1.0, 0.0), (0.0, 1.0)), (1.0 - coin, coin), blankets,
                                f"binary sum, coin {coin:g}, {blankets} blanket(s)")


def uniform_blankets(randomizer: FiniteRandomizer | RandomizedResponse, blankets: int) -> MultiMessageProtocol:
    """A single-message randomizer plus ``blankets`` messages uniform over its outputs per user.

    k-RR with uniform blankets is mixDUMP (Li et al. 2023, flip probability f = (k − 1)/(e^{ε0} + k − 1);
    Wang et al. Table 4); ``darrm shuffle --randomizer rr:K+B`` builds it.

    Args:
        randomizer: the input-dependent message's randomizer.
        blankets: blanket messages per user (>= 1).

    Returns:
        The protocol.

    Raises:
        ParameterError: ``randomizer`` is not a specific randomizer, or ``blankets`` < 1.
    """
    v.instance("randomizer", randomizer, (FiniteRandomizer, RandomizedResponse),
               "a FiniteRandomizer or RandomizedResponse")
    fin = randomizer.to_finite() if isinstance(randomizer, RandomizedResponse) else randomizer
    d = len(fin.matrix[0])
    return MultiMessageProtocol(fin.matrix, tuple([1.0 / d] * d), blankets,
                                f"{getattr(randomizer, 'name', fin.name)} + {blankets} uniform blanket(s)")


@functools.lru_cache(maxsize=32)
def _gparvs(proto: MultiMessageProtocol) -> tuple[Atoms, ...]:
    """The distinct GPARVs (r0, r1, w) = (R(x0)(y)/B(y), R(x1)(y)/B(y), B(y)) over ordered victim pairs."""
    ext = proto.extended
    k = ext.shape[0] - 1
    out, seen = [], set()
    for a in range(k):
        for b in range(k):
            if a == b or np.array_equal(ext[a], ext[b]):
                continue
            at = dataset_atoms(ext, a, b, k)
            rows = np.round(np.stack([at.r0, at.r1, at.w], axis=1), 12)
            key = tuple(map(tuple, rows[np.lexsort(rows.T[::-1])]))
            if key not in seen:
                seen.add(key)
                out.append(at)
    return tuple(out)


def _delta(proto: MultiMessageProtocol, summands: int, eps: float, kind: str) -> float:
    """max over the GPARVs of the (kind) bound on (1/N) E[(Σ_{i<=N} G_i)_+], N = ``summands``."""
    best = 0.0
    for at in _gparvs(proto):
        best = max(best, positive_part(at.values(eps), at.w, summands, kind)[0] / summands)
    return min(1.0, best)


def upper_delta(proto: MultiMessageProtocol, n: int, eps: float) -> float:
    """δ(ε) upper bound of the shuffled protocol with n users (module docstring, upper bound).

    Args:
        proto: the protocol.
        n: the number of users (>= 1).
        eps: ε (>= 0).

    Returns:
        A δ with which the protocol is (ε, δ)-DP (replace-one neighbours).

    Raises:
        ParameterError: a parameter out of range.
    """
    v.instance("proto", proto, MultiMessageProtocol, "a MultiMessageProtocol")
    n, eps = v.count("n", n), v.epsilon("eps", eps, allow_zero=True)
    if eps >= proto.log_ratio:
        return 0.0
    share = _share_upper(proto, n, eps)
    return min(share, split_upper_delta(proto, n, eps)) if _binary(proto) else share


#: every split is evaluated up to this many users; above, at most :data:`SPLIT_BLOCKS` blocks of splits
SPLIT_EXACT_N = 1000
#: blocks of splits above :data:`SPLIT_EXACT_N` users (ε grows by about 1/(2·blocks) relative)
SPLIT_BLOCKS = 128
#: fewer blocks are used where their laws would cost more than this many multiply-adds in all
SPLIT_WORK = 6e9
#: ... but never fewer than this many: the split bound is then not evaluated (see :func:`split_blocks`)
SPLIT_MIN_BLOCKS = 16


def _binary(proto: MultiMessageProtocol) -> bool:
    return proto.array.shape == (2, 2)


def split_blocks(proto: MultiMessageProtocol, n: int) -> int:
    """The number of blocks of splits of :func:`split_upper_delta` (n: every split), or 0 where even
    :data:`SPLIT_MIN_BLOCKS` laws would cost more than :data:`SPLIT_WORK` (the windows' lengths:
    about 22 standard deviations each; measured ~2e9 multiply-adds per CPU second; e.g. binary RR,
    ε0 = 1, n = 1e6: 30 blocks with one blanket per user, 19 with four)."""
    if n <= SPLIT_EXACT_N:
        return n
    u0, u1 = float(proto.array[0, 1]), float(proto.array[1, 1])
    b1 = float(proto.blanket[1])
    others = 22 * math.sqrt(n * max(u0 * (1 - u0), u1 * (1 - u1))) + 1
    blank = 22 * math.sqrt(n * proto.blankets * b1 * (1 - b1)) + 1
    blocks = min(SPLIT_BLOCKS, int(SPLIT_WORK // (others * (others + blank))))
    return blocks if blocks >= SPLIT_MIN_BLOCKS else 0


def _split_starts(n: int, blocks: int) -> tuple[list[int], int]:
    """(block starts j0, users n') of :func:`split_upper_delta`: every split with n users when
    ``blocks`` = n, else ``blocks`` blocks of g splits covering 0..n − 1 (the last one starting at
    n − g), each evaluated with n' = n − g + 1 users."""
    if blocks >= n:
        return list(range(n)), n
    g = -(-n // blocks)
    starts = sorted(set(list(range(0, n - g, g)) + [n - g]))
    return starts, n - g + 1


@functools.lru_cache(maxsize=4)
def _split_laws(proto: MultiMessageProtocol, n: int) -> tuple[CountLaw, ...]:
    """Y_{j0} of every block start with n' users (:func:`_split_starts`), the n·b blankets kept."""
    starts, users = _split_starts(n, split_blocks(proto, n))
    u0, u1 = float(proto.array[0, 1]), float(proto.array[1, 1])
    law = binomial_sum_law.__wrapped__  # not through its small cache: there are up to SPLIT_BLOCKS laws
    return tuple(law(((j0, u1), (users - 1 - j0, u0), (n * proto.blankets, float(proto.blanket[1]))))
                 for j0 in starts)


def split_upper_delta(proto: MultiMessageProtocol, n: int, eps: float) -> float:
    """δ(ε) upper bound of a protocol with two inputs and two outputs by its splits (module
    docstring: every split up to :data:`SPLIT_EXACT_N` users, blocks of splits above; 1 where
    :func:`split_blocks` is 0, not evaluated).

    Args:
        proto: a protocol with two inputs and two outputs.
        n: the number of users (>= 1).
        eps: ε (>= 0).

    Returns:
        A δ with which the protocol is (ε, δ)-DP.

    Raises:
        NotApplicable: ``proto`` is not 2 × 2.
        ParameterError: a parameter out of range.
    """
    v.instance("proto", proto, MultiMessageProtocol, "a MultiMessageProtocol")
    n, eps = v.count("n", n), v.epsilon("eps", eps, allow_zero=True)
    if not _binary(proto):
        raise NotApplicable("proto", f"the split bound needs two inputs and two outputs, got {proto.array.shape}")
    if split_blocks(proto, n) == 0:
        return 1.0
    ee, u = math.exp(eps), float(np.finfo(float).eps)
    us = (float(proto.array[0, 1]), float(proto.array[1, 1]))
    best = 0.0
    for law in _split_laws(proto, n):
        f = np.concatenate(([0.0], law.w, [0.0]))
        f_prev, f_here = f[:-1], f[1:]  # F(a − 1), F(a)
        rel = law.rel * 1.01 + (len(f_here) + 4) * u
        for a, b in ((0, 1), (1, 0)):
            pa = us[a] * f_prev + (1 - us[a]) * f_here
            qa = us[b] * f_prev + (1 - us[b]) * f_here
            d, mag = pa - ee * qa, pa + ee * qa
            near = d + rel * mag > 0
            best = max(best, float(np.sum(np.maximum(d, 0.0))) + law.dropped + rel * float(np.sum(mag[near])))
    return min(1.0, best * (1 + 4 * u))


def plain_upper_delta(proto: MultiMessageProtocol, n: int, eps: float) -> float:
    """The upper bound without the others' blanket shares (δ_N over N = n·b + 1 messages): the
    previous bound, kept for comparisons (benchmarks, tests).

    Args:
        proto: the protocol.
        n: the number of users (>= 1).
        eps: ε (>= 0).

    Returns:
        A δ with which the protocol is (ε, δ)-DP, >= :func:`upper_delta`'s.
    """
    v.instance("proto", proto, MultiMessageProtocol, "a MultiMessageProtocol")
    n, eps = v.count("n", n), v.epsilon("eps", eps, allow_zero=True)
    if eps >= proto.log_ratio:
        return 0.0
    return _delta(proto, n * proto.blankets + 1, eps, "upper")


@functools.lru_cache(maxsize=32)
def blanket_share(proto: MultiMessageProtocol) -> float:
    """γ = min over inputs x and outputs y (B(y) > 0) of R(x)(y)/B(y), rounded down by a relative
    1e-12 (a smaller γ keeps R(x) − γB >= 0; the module docstring's bound holds for every γ in
    [0, that minimum]).

    Args:
        proto: the protocol.

    Returns:
        γ in [0, 1).
    """
    m, bl = proto.array, np.array(proto.blanket)
    pos = bl > 0
    g = float(np.min(m[:, pos] / bl[pos]))
    return max(0.0, min(g * (1 - 1e-12), 1.0 - 1e-12))


#: block edges of M, in standard deviations from its mean, outside the central part
_TAIL_Z = (-10.0, -7.0, -5.5)
#: the central part [-CORE_Z, CORE_Z] sd is cut into blocks of width h sd (see :func:`_share_blocks`)
CORE_Z = 4.5


def _share_blocks(m: int, gamma: float, n0: int) -> tuple[np.ndarray, np.ndarray]:
    """A partition of [0, m] into intervals [lo_j, hi_j] (lo_0 = 0) for the blocks of M ~ Bin(m, γ):
    edges at the mean + z·sd for z in :data:`_TAIL_Z`, then every h sd up to :data:`CORE_Z` sd, the
    last block open to m.  h = 2e-3·(n0 + mean)/sd clipped to [0.25, 2]: δ_N falls like
    exp(−c·N) with c·N ~ ln(1/δ) <= 25, so a block of h sd costs a factor <= e^{25·2e-3} ≈ 1.05 in δ
    (the bound stays valid for every partition; only its tightness depends on it)."""
    mean, sd = m * gamma, math.sqrt(m * gamma * (1 - gamma))
    h = min(2.0, max(0.25, 2e-3 * (n0 + mean) / max(sd, 1e-300)))
    zs = list(_TAIL_Z) + list(np.arange(-CORE_Z, CORE_Z + 1e-9, h))
    edges = sorted({int(math.floor(mean + z * sd)) for z in zs} | {0})
    lo = np.array([e for e in edges if 0 <= e <= m], dtype=np.int64)
    hi = np.append(lo[1:] - 1, m)
    return lo, hi


@functools.lru_cache(maxsize=32)
def _few_atoms(proto: MultiMessageProtocol) -> bool:
    """Every GPARV has at most three distinct (r0, r1) with w > 0, so its sums are the exact count
    sums (:mod:`.count_sums`), a few ms each.  Otherwise (OUE: 2^k outputs) one block of M costs a
    grid evaluation (seconds), so the blanket-share bound is not used (measured: OUE k = 4, one
    blanket, n = 1e4: 74 CPU s against 4 s for a 7 % smaller ε)."""
    return all(len({(round(float(a), 12), round(float(b), 12)) for a, b, w in zip(at.r0, at.r1, at.w, strict=True)
                    if w > 0}) <= 3 for at in _gparvs(proto))


def _share_upper(proto: MultiMessageProtocol, n: int, eps: float) -> float:
    """min(plain bound, Σ_j (P(M ∈ block j) + its error) · δ_{N + lo_j}) (module docstring)."""
    n0 = n * proto.blankets + 1
    plain = _delta(proto, n0, eps, "upper")
    gamma = blanket_share(proto)
    if gamma <= 0.0 or n == 1 or plain == 0.0 or not _few_atoms(proto):
        return plain
    lo, hi = _share_blocks(n - 1, gamma, n0)
    mass, err = count_sums._interval_masses(lo, hi, n - 1, gamma)
    vals = np.array([plain if a == 0 else _delta(proto, n0 + int(a), eps, "upper") for a in lo])
    share = float(np.dot(mass + err, vals)) * (1 + 4 * len(lo) * np.finfo(float).eps)
    return min(plain, share)


@functools.lru_cache(maxsize=32)
def _candidates(proto: MultiMessageProtocol) -> tuple[bool, float | None]:
    """(a deterministic row exists, residual ‖μᵀR − B‖₁ of the best mixture μ or None when B is
    not a mixture of the rows to 1e-9)."""
    m = proto.array
    det = bool(np.any(np.count_nonzero(m, axis=1) == 1))  # a point mass (rows were renormalised)
    bl = np.array(proto.blanket)
    a = np.vstack([m.T, np.ones((1, m.shape[0]))])
    mu, _ = nnls(a, np.append(bl, 1.0))
    mu = mu / mu.sum()
    resid = float(np.abs(mu @ m - bl).sum())
    return det, (resid if resid <= 1e-9 else None)


@dataclass(frozen=True)
class CountPair:
    """One candidate of the count lower bound (module docstring): the victim's message is in its
    own class with probability ``own``, in the other's with ``other``; every other user's message
    (all at one input x*) is in each class with probability ``star``, every blanket with
    ``blank``; ``asym`` bounds the total variation moved by making the classes exactly symmetric
    (per the victim, per other user, per blanket)."""

    own: float
    other: float
    star: float
    blank: float
    asym: tuple[float, float, float]


#: a class probability mismatch above this (absolute) is not symmetric: the candidate is skipped
_SYM_TOL = 1e-12
#: the general search of :func:`_count_pairs` costs k³·d operations; above this it is not done
#: (no count candidate; k-RR with uniform blankets is recognised directly)
_COUNT_WORK = 3e8


def _count_triple(m: np.ndarray, bl: np.ndarray, x0: int, x1: int, xs: int) -> CountPair | None:
    """The candidate of the victim pair (x0, x1) with the others at xs, or None when its classes are
    not symmetric to :data:`_SYM_TOL` (or the victim's message is never in the other's class)."""
    a, a2 = m[x0] > m[x1], m[x0] < m[x1]
    r0a, r0a2, r1a, r1a2 = m[x0][a].sum(), m[x0][a2].sum(), m[x1][a].sum(), m[x1][a2].sum()
    own, other = (r0a + r1a2) / 2, (r0a2 + r1a) / 2
    d_vic = max(abs(r0a - own) + abs(r0a2 - other), abs(r1a2 - own) + abs(r1a - other))
    ba, ba2 = float(bl[a].sum()), float(bl[a2].sum())
    sa, sa2 = float(m[xs][a].sum()), float(m[xs][a2].sum())
    if (not (other > 0 and own > other) or d_vic > _SYM_TOL or abs(ba - ba2) > _SYM_TOL
            or abs(sa - sa2) > _SYM_TOL):
        return None
    return CountPair(float(own), float(other), (sa + sa2) / 2, (ba + ba2) / 2,
                     (float(d_vic), abs(sa - sa2) / 2, abs(ba - ba2) / 2))


@functools.lru_cache(maxsize=32)
def _count_pairs(proto: MultiMessageProtocol) -> tuple[CountPair, ...]:
    """The distinct count candidates over ordered victim pairs (x0, x1) and fillers x* whose classes
    A = {y : R(x0)(y) > R(x1)(y)}, A' = {y : R(x0)(y) < R(x1)(y)} are symmetric to :data:`_SYM_TOL`:
    R(x0)(A) = R(x1)(A'), R(x0)(A') = R(x1)(A), R(x*)(A) = R(x*)(A'), B(A) = B(A'); k-RR (k >= 3)
    with uniform blankets (A = {x0}) and OUE (k >= 3) with uniform blankets (A = the outputs with
    bit x0 set and bit x1 clear) are such protocols.  Sorted by ``star`` (fewest clones first).
    k-RR with uniform blankets (equal diagonal, off-diagonal and blanket entries to 1e-12) has one
    candidate up to rounding, so only the triple (0, 1, 2) is evaluated (O(k)); otherwise the
    general search (k³·d operations) is skipped above :data:`_COUNT_WORK`."""
    m, bl = proto.array, np.array(proto.blanket)
    k, d = m.shape
    if k >= 3 and d == k:
        diag, off = np.diag(m), m[~np.eye(k, dtype=bool)]
        if max(np.ptp(diag), np.ptp(off), np.ptp(bl)) <= _SYM_TOL:
            cp = _count_triple(m, bl, 0, 1, 2)
            return () if cp is None else (cp,)
    if float(k) ** 3 * d > _COUNT_WORK:
        return ()
    found: dict[tuple[float, ...], CountPair] = {}
    for x0 in range(k):
        for x1 in range(k):
            if x0 == x1:
                continue
            for xs in range(k):
                if xs in (x0, x1):
                    continue
                cp = _count_triple(m, bl, x0, x1, xs)
                if cp is None:
                    continue
                key = tuple(np.round([cp.own, cp.other, cp.star, cp.blank], 14))
                if key not in found or sum(cp.asym) < sum(found[key].asym):
                    found[key] = cp
    return tuple(sorted(found.values(), key=lambda c: c.star))


def count_lower_delta(proto: MultiMessageProtocol, n: int, eps: float) -> float:
    """δ(ε) lower bound from the others at x* ∉ {x0, x1}: the exact divergence of the class counts
    (N_A, N_A'), rounded down, maximised over the candidates of :func:`_count_pairs` (module
    docstring, lower bound).

    Args:
        proto: a protocol with at least one symmetric candidate (k-RR or OUE, k >= 3, with uniform
            blankets).
        n: the number of users (>= 1).
        eps: ε (>= 0).

    Returns:
        A δ that a pair of neighbouring datasets attains or exceeds.

    Raises:
        NotApplicable: ``proto`` has no symmetric candidate.
        ParameterError: a parameter out of range.
    """
    v.instance("proto", proto, MultiMessageProtocol, "a MultiMessageProtocol")
    n, eps = v.count("n", n), v.epsilon("eps", eps, allow_zero=True)
    pairs = _count_pairs(proto)
    if not pairs:
        raise NotApplicable("proto", "the count lower bound needs a filler input outside the victim pair whose "
                            "messages fall in the pair's two classes equally often (e.g. k-RR or OUE with "
                            "k >= 3 and uniform blankets)")
    best = 0.0
    for cp in pairs:
        ratio = cp.own / cp.other
        params = VRParams(ratio, (ratio - 1) * cp.other, ratio)  # pα = own, α = other
        law = binomial_sum_law(((n - 1, min(1.0, 2 * cp.star)), (n * proto.blankets, min(1.0, 2 * cp.blank))))
        # + 8u: VRParams re-derives pα and α from (p, β) in floating point (a few ulps of TV)
        moved = cp.asym[0] + 8 * np.finfo(float).eps + (n - 1) * cp.asym[1] + n * proto.blankets * cp.asym[2]
        d = vr_delta(eps, n, params, kind="lower", count_law=law) - (1 + math.exp(eps)) * moved
        best = max(best, d)
    return max(0.0, best)


def lower_delta(proto: MultiMessageProtocol, n: int, eps: float) -> float:
    """δ(ε) lower bound: the larger of the module docstring's candidates that exist.

    Args:
        proto: the protocol.
        n: the number of users (>= 1).
        eps: ε (>= 0).

    Returns:
        A δ that some pair of neighbouring datasets (or a mixture of such pairs) attains or exceeds.

    Raises:
        NotApplicable: no candidate exists (no deterministic row, B not a mixture of the rows, no
            symmetric victim classes with a filler outside the pair, more than two outputs).
        ParameterError: a parameter out of range.
    """
    v.instance("proto", proto, MultiMessageProtocol, "a MultiMessageProtocol")
    n, eps = v.count("n", n), v.epsilon("eps", eps, allow_zero=True)
    det, resid = _candidates(proto)
    if not det and resid is None and not _count_pairs(proto) and proto.array.shape[1] != 2:
        raise NotApplicable("proto", "no input's message is deterministic and the blanket distribution is not "
                            "a mixture of the messages' distributions: no exact dataset pair is available")
    if eps >= proto.log_ratio:
        return 0.0
    return max(_direct_lower(proto, n, eps), _gparv_lower(proto, n, eps))


def _direct_lower(proto: MultiMessageProtocol, n: int, eps: float) -> float:
    """The count candidates and the two-output candidates (those that exist; 0 if none)."""
    best = count_lower_delta(proto, n, eps) if _count_pairs(proto) else 0.0
    if proto.array.shape[1] == 2:
        best = max(best, two_output_lower_delta(proto, n, eps))
    return best


def two_output_lower_delta(proto: MultiMessageProtocol, n: int, eps: float) -> float:
    """δ(ε) lower bound of a protocol with two outputs: the exact divergence of the datasets with
    every other user at one input x*, maximised over x* and the ordered victim pairs, rounded down
    (module docstring, lower bound, "two outputs").

    Args:
        proto: a protocol with two outputs.
        n: the number of users (>= 1).
        eps: ε (>= 0).

    Returns:
        A δ that a pair of neighbouring datasets attains or exceeds.

    Raises:
        NotApplicable: ``proto`` has more than two outputs.
        ParameterError: a parameter out of range.
    """
    v.instance("proto", proto, MultiMessageProtocol, "a MultiMessageProtocol")
    n, eps = v.count("n", n), v.epsilon("eps", eps, allow_zero=True)
    if proto.array.shape[1] != 2:
        raise NotApplicable("proto", f"the two-output lower bound needs two outputs, got {proto.array.shape[1]}")
    return _two_output(proto, n, eps, n * proto.blankets)


#: the two-output lower bound of a 2 × 2 protocol evaluates the splits j < 4 and j >= n − 4
#: (measured, binary RR, one blanket, n = 1000: the worst split is j = n − 2 at ε0 = 1 and j = 11 at
#: ε0 = 4, not an extreme)
_NEAR_SPLITS = 4
#: ... and up to :data:`_LADDER_MAX_N` users these distances from either extreme (every split up to
#: :data:`SPLIT_EXACT_N` users); above it only the :data:`_NEAR_SPLITS` (each law costs ~0.1 s at 1e6)
_LADDER = (5, 8, 12, 18, 27, 40, 60, 90)
_LADDER_MAX_N = 100_000


@functools.lru_cache(maxsize=4)
def _lower_split_laws(proto: MultiMessageProtocol, n: int, blanket_messages: int) -> tuple[CountLaw, ...]:
    """Y_j of the splits j at the distances :data:`_NEAR_SPLITS` and :data:`_LADDER` from either
    extreme (every split up to :data:`SPLIT_EXACT_N` users), with n users and ``blanket_messages``."""
    near = set(range(_NEAR_SPLITS))
    if n <= SPLIT_EXACT_N:
        near = set(range(n))
    elif n <= _LADDER_MAX_N:
        near |= set(_LADDER)
    js = sorted({j for j in near if j < n} | {n - 1 - j for j in near if j < n})
    u0, u1, b1 = float(proto.array[0, 1]), float(proto.array[1, 1]), float(proto.blanket[1])
    law = binomial_sum_law.__wrapped__
    return tuple(law(((j, u1), (n - 1 - j, u0), (blanket_messages, b1))) for j in js)


def _two_output(proto: MultiMessageProtocol, n: int, eps: float, blanket_messages: int) -> float:
    """:func:`two_output_lower_delta` with ``blanket_messages`` blankets in F (n·b; other values only
    for the tests' broken variant)."""
    m = proto.array
    ee, u = math.exp(eps), float(np.finfo(float).eps)
    best = 0.0
    b1 = float(proto.blanket[1])
    if m.shape[0] == 2:  # splits: j of the others at input 1
        laws = _lower_split_laws(proto, n, blanket_messages)
    else:  # all others at one input
        laws = tuple(binomial_sum_law(((n - 1, float(m[xs, 1])), (blanket_messages, b1)))
                     for xs in range(m.shape[0]))
    for law in laws:
        f = np.concatenate(([0.0], law.w, [0.0]))
        f_prev, f_here = f[:-1], f[1:]  # F(a − 1), F(a) for a = c_lo .. c_hi + 1
        for x0 in range(m.shape[0]):
            for x1 in range(m.shape[0]):
                u0, u1 = float(m[x0, 1]), float(m[x1, 1])
                if x0 == x1 or u0 == u1:
                    continue
                pa = u0 * f_prev + (1 - u0) * f_here
                qa = u1 * f_prev + (1 - u1) * f_here
                d = pa - ee * qa
                keep = d > 0
                if not keep.any():
                    continue
                mag = float(np.sum(pa[keep] + ee * qa[keep]))
                charge = ee * law.dropped + (law.rel * 1.01 + (len(d) + 4) * u) * mag
                best = max(best, float(np.sum(d[keep])) - charge)
    return max(0.0, best)


def _gparv_lower(proto: MultiMessageProtocol, n: int, eps: float) -> float:
    """The deterministic-row and blanket-matching mixture candidates (those that exist; 0 if none)."""
    det, resid = _candidates(proto)
    best = 0.0
    if det:
        best = _delta(proto, n * proto.blankets + 1, eps, "lower")
    if resid is not None:
        charge = (1.0 + math.exp(eps)) * (n - 1) * resid / 2
        best = max(best, _delta(proto, n * (proto.blankets + 1), eps, "lower") - charge)
    return max(0.0, best)


def _search(f: Callable[[float], float], delta: float, hi: float, kind: str) -> float:
    """ε(δ) of a non-increasing δ(ε) = ``f``: [0, hi] when finite, else hi doubled from 1 up to
    :data:`EPS_CAP` (unreachable: ∞ for an upper bound, the cap for a lower one — both valid)."""
    if math.isinf(hi):
        hi = 1.0
        while f(hi) > delta:
            hi *= 2
            if hi > EPS_CAP:
                return math.inf if kind == "upper" else EPS_CAP
    return eps_for_delta(f, delta, hi, "upper" if kind == "upper" else "lower")


def eps_bound(proto: MultiMessageProtocol, n: int, delta: float) -> Bound:
    """ε(δ) upper bound (:func:`upper_delta`; ε = ∞ when δ is out of reach below ε = 50).

    Args:
        proto: the protocol.
        n: the number of users.
        delta: the target δ in (0, 1).

    Returns:
        An upper :class:`~.bound.Bound` named :data:`UPPER_NAME`.

    Raises:
        ParameterError: a parameter out of range.
    """
    delta, n = v.open_unit("delta", delta), v.count("n", n)
    return Bound(UPPER_NAME, "upper", True, _upper_search(proto, n, delta), delta, _UP_NOTE)


#: the search of :func:`eps_bound` starts from the proxy's root ε_p within [ε_p (1 − w), ε_p (1 + w)]
_PROXY_WIDTH = 2e-3


def _upper_search(proto: MultiMessageProtocol, n: int, delta: float) -> float:
    """ε(δ) of :func:`upper_delta`, its evaluations (one per block of M) kept few: a proxy, δ_N at
    the mean of M (one count sum per evaluation, no guarantee), locates the root first; the checked
    search of the bound itself then starts from a narrow bracket around it, widened by factors of
    1.01 until it brackets (:func:`darrm.numerics.inversion.inverse_monotone`; the returned ε is
    certified by the bound itself, whatever the proxy)."""
    if _binary(proto) and split_blocks(proto, n) > 0:  # each ε is a valid upper bound: the smaller one is kept
        hi = proto.log_ratio
        e_split = _search(lambda x: 0.0 if x >= hi else split_upper_delta(proto, n, x), delta, hi, "upper")
        return min(e_split, _share_search(proto, n, delta))
    return _share_search(proto, n, delta)


def _share_search(proto: MultiMessageProtocol, n: int, delta: float) -> float:
    """ε(δ) of the blanket-share bound (:func:`_upper_search`)."""
    f = lambda x: 0.0 if x >= proto.log_ratio else _share_upper(proto, n, x)  # noqa: E731
    gamma = blanket_share(proto)
    hi = proto.log_ratio
    if gamma <= 0.0 or n == 1 or math.isinf(hi) or not _few_atoms(proto):
        return _search(f, delta, hi, "upper")
    mid = n * proto.blankets + 1 + int((n - 1) * gamma)
    ep = _search(lambda x: 0.0 if x >= hi else _delta(proto, mid, x, "upper"), delta, hi, "upper")
    if not 0.0 < ep < hi:
        return _search(f, delta, hi, "upper")
    lo_e, hi_e = ep * (1 - _PROXY_WIDTH), min(hi, ep * (1 + _PROXY_WIDTH))
    return inverse_monotone(f, delta, lo_e, hi_e, increasing=False, side="certified", log_value=True,
                            xtol=1e-14, rtol=1e-7, expand=1.01, limits=(0.0, hi), name="delta")


def lower_eps_bound(proto: MultiMessageProtocol, n: int, delta: float) -> Bound:
    """ε(δ) lower bound (:func:`lower_delta`).

    Args:
        proto: the protocol.
        n: the number of users.
        delta: the target δ in (0, 1).

    Returns:
        A lower :class:`~.bound.Bound` named :data:`LOWER_NAME`.

    Raises:
        NotApplicable: no exact dataset pair is available (:func:`lower_delta`).
        ParameterError: a parameter out of range.
    """
    delta, n = v.open_unit("delta", delta), v.count("n", n)
    det, _ = _candidates(proto)
    direct = bool(_count_pairs(proto)) or proto.array.shape[1] == 2
    if direct and not det:
        # each candidate's ε(δ) is a lower bound by itself: search on the direct (count, two-output)
        # candidates, and on the maximum only if a GPARV candidate still exceeds δ there (then its
        # root lies beyond)
        e = _search(lambda x: _direct_lower(proto, n, x) if x < proto.log_ratio else 0.0, delta,
                    proto.log_ratio, "lower")
        if e < proto.log_ratio and _gparv_lower(proto, n, e) > delta:
            e = max(e, _search(lambda x: lower_delta(proto, n, x), delta, proto.log_ratio, "lower"))
    else:
        e = _search(lambda x: lower_delta(proto, n, x), delta, proto.log_ratio, "lower")
    note = _LO_NOTE_DET if det else (_LO_NOTE_COUNT if direct else _LO_NOTE_MIX)
    return Bound(LOWER_NAME, "lower", True, e, delta, note)


def bounds(proto: MultiMessageProtocol, n: int, delta: float) -> list[Bound]:
    """The upper and (where available) the lower ε(δ) bound; a refused lower bound is returned as
    an invalid Bound whose note says why.

    Args:
        proto: the protocol.
        n: the number of users.
        delta: the target δ in (0, 1).

    Returns:
        [upper, lower].

    Raises:
        ParameterError: a parameter out of range.
    """
    up = eps_bound(proto, n, delta)
    try:
        lo = lower_eps_bound(proto, n, delta)
    except NotApplicable as exc:
        lo = Bound.not_applicable(LOWER_NAME, "lower", str(exc), delta=delta)
    return [up, lo]


def as_protocol(local: np.ndarray | Sequence[Sequence[float]], blanket: Sequence[float], blankets: int
                ) -> MultiMessageProtocol:
    """A :class:`MultiMessageProtocol` from arrays (validated as at construction).

    Args:
        local: ``local[x][y]`` = P[R(x) = y].
        blanket: B(y).
        blankets: blanket messages per user (>= 1).

    Returns:
        The protocol.

    Raises:
        ParameterError: as :class:`MultiMessageProtocol`.
    """
    return MultiMessageProtocol(tuple(tuple(float(x) for x in row) for row in np.asarray(local, dtype=float)),
                                tuple(float(x) for x in np.asarray(blanket, dtype=float)), blankets)
