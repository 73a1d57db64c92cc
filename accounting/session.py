"""A budgeted labelling session: what an ensemble's owner runs to answer queries with DaRRM.

:class:`LabellingSession` wraps a certified γ table, labels batches of votes with
:func:`darrm.mechanism.aggregate`, and keeps the privacy ledger.  Every labelled query (one vote
vector, one released bit) is (ε_q, δ_q)-DP for the table's parameters — (mε, δ) for a
:class:`darrm.PrivacyParams` table, (target_eps, target_delta) for a :class:`darrm.DisjointParams`
one — under the table's neighbouring relation.  Q queries compose; the session reports the
tightest valid bound the toolkit has for Q identical (ε_q, δ_q) queries, the *exact* optimal
homogeneous composition (Kairouz, Oh & Viswanath 2015, Theorem 3.3;
:func:`darrm.accounting.optimal_homogeneous_epsilon`), as ε(δ_total) at the session's δ_total —
like Opacus's ``accountant.get_epsilon(delta)``.  The composition holds for adaptively chosen
queries.

The budget is enforced *before* anything is released: a batch that would take ε(δ_total) past
``budget_epsilon`` raises :class:`PrivacyBudgetExceeded` and releases nothing.  With a state file
(``path=`` or :meth:`LabellingSession.load`), the spent queries are written (atomically) before the
labels are returned, so a crash never forgets a release.

The state file (JSON) holds the ledger and the table's fingerprint (sha256 of its parameters and
exact γ values), never the random generator's state (which, with the released labels, would tell
which labels are the true majority); a resumed session draws fresh randomness.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path

import numpy as np

from darrm import validation as v
from darrm.atomic import atomic_write_json
from darrm.errors import CertificationError, DarrmError
from darrm.locking import Claim, claim
from darrm.mechanism import aggregate_counts, check_counts, vote_counts
from darrm.numerics.delta import composed_delta
from darrm.table import GammaTable
from darrm.verification import certify_table

from .composition import optimal_homogeneous_epsilon

__all__ = ["FORMAT", "LabellingSession", "PrivacyBudgetExceeded", "SessionFileError", "table_fingerprint"]

#: the state file's format tag
FORMAT = "darrm-labelling-session/1"


class PrivacyBudgetExceeded(DarrmError):
    """A batch of queries would take the session past its privacy budget; nothing was released."""


class SessionFileError(DarrmError):
    """A session state file is unreadable, corrupt, or belongs to another γ table."""


def table_fingerprint(table: GammaTable) -> str:
    """sha256 of a table's parameters and exact γ values (``float.hex``): a session's table identity."""
    body = {"params_type": type(table.params).__name__, "params": table.params.to_dict(),
            "gamma": [float(x).hex() for x in np.asarray(table.gamma, dtype=np.float64)]}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _state_checksum(state: dict) -> str:
    body = {k: val for k, val in state.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def per_query_budget(table: GammaTable) -> tuple[float, float]:
    """(ε_q, δ_q) of one DaRRM release with this table: (mε, δ), or the disjoint target (ε, δ)."""
    return table.params.query_budget


class LabellingSession:
    """Label batches of votes with a certified γ table within a total privacy budget.

    Args:
        table: the γ table (:func:`darrm.solve` / :func:`darrm.load`); certified on creation
            (:func:`darrm.certify`), an uncertified table raises :class:`darrm.CertificationError`.
        budget_epsilon: the largest total ε the session may spend, at δ_total = ``delta``.
        delta: δ_total at which the spent ε is reported and the budget enforced; must be at least
            1 − (1 − δ_q)^Q for Q queries to be answerable at all.
        secure: draw the mechanism's coins from the OS CSPRNG (:mod:`darrm.secure_random`).
        rng: numpy Generator or seed for the coins when ``secure`` is False.
        path: a state file; when given, every batch is recorded there before its labels are returned.

    Interoperability with ``dp_accounting``: DaRRM's per-query release is not one of
    dp_accounting's mechanisms, and dp_accounting has no generic (ε, δ) event.  For a pure-DP
    query (δ_q = 0) the composition's worst case is ε_q-randomised response, so
    :meth:`dp_event` returns ``SelfComposedDpEvent(RandomizedResponseDpEvent(2/(1+e^ε_q), 2), Q)``
    (account it with ``neighboring_relation=REPLACE_ONE``, which dp_accounting requires for
    randomised response); for δ_q > 0 it returns ``UnsupportedDpEvent()``.
    """

    def __init__(self, table: GammaTable, *, budget_epsilon: float, delta: float, secure: bool = False,
                 rng: np.random.Generator | int | None = None, path: str | os.PathLike | None = None,
                 _queries: int = 0, _resume: bool = False, _claim: Claim | None = None):
        self._claim: Claim | None = None
        v.instance("table", table, GammaTable, "a darrm.GammaTable")
        cert = certify_table(table)
        if not cert.certified:
            raise CertificationError(f"refusing a session with a table that is not private for its parameters "
                                     f"(certificate bound {cert.violation:.3e} > 0)")
        self.table = table
        self.budget_epsilon = v.positive("budget_epsilon", budget_epsilon)
        self.delta = v.open_unit("delta", delta)
        self.secure = v.flag("secure", secure)
        self._rng = v.generator("rng", rng)  # checked even when secure ignores it
        self.path = None if path is None else v.path("path", path)
        self.per_query = per_query_budget(table)
        self.fingerprint = table_fingerprint(table)
        self._queries = int(_queries)
        if self.path is not None:
            if not _resume and self.path.exists():
                raise SessionFileError(f"{self.path}: a session state exists there; resume it with "
                                       f"LabellingSession.load (a new session would reset its ledger)")
            # one live session per ledger, in any process: two would each write their own count
            self._claim = _claim if _claim is not None else claim("path", self.path, reentrant=False)
            try:
                self.save(self.path)
            except BaseException:
                self.close()
                raise

    # -- the state file's claim ---------------------------------------------------------------
    def close(self) -> None:
        """Give the state file back (another process may then resume the session); a closed
        session labels nothing more.  Also done by ``with`` and when the session is collected."""
        c, self._claim = self._claim, None
        if c is not None:
            c.release()
        self._closed = True

    def __enter__(self) -> LabellingSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        c = getattr(self, "_claim", None)
        if c is not None:
            c.release()

    # -- the ledger -------------------------------------------------------------------------
    @property
    def queries(self) -> int:
        """Queries answered so far (one per released label)."""
        return self._queries

    def epsilon_for(self, queries: int, delta: float | None = None) -> float:
        """ε_total of ``queries`` identical (ε_q, δ_q) queries at δ_total (exact composition);
        inf where δ_total < 1 − (1 − δ_q)^queries (no finite ε)."""
        d = self.delta if delta is None else v.open_unit("delta", delta)
        q = int(queries)
        if q == 0:
            return 0.0
        eps_q, delta_q = self.per_query
        if d < composed_delta(delta_q, q):
            return math.inf
        return optimal_homogeneous_epsilon(eps_q, delta_q, q, d)

    def get_epsilon(self, delta: float | None = None) -> float:
        """ε spent so far at δ_total = ``delta`` (default: the session's δ), like Opacus's accountant."""
        return self.epsilon_for(self._queries, delta)

    @property
    def epsilon_spent(self) -> float:
        """ε spent so far at the session's δ."""
        return self.get_epsilon()

    def remaining_queries(self) -> int:
        """How many more queries fit in the budget (ε(δ_total) is non-decreasing in the count)."""
        def fits(extra: int) -> bool:
            return self.epsilon_for(self._queries + extra) <= self.budget_epsilon

        if not fits(1):
            return 0
        lo, hi = 1, 2
        while fits(hi):
            lo, hi = hi, hi * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        return lo

    # -- labelling --------------------------------------------------------------------------
    def label(self, votes: object) -> np.ndarray:
        """Private majority labels for a batch of (Q, K) 0/1 votes (one query: a (1, K) matrix).

        Raises:
            PrivacyBudgetExceeded: the batch would take ε(δ_total) past the budget; nothing released.
            ParameterError: malformed votes; nothing charged.
        """
        return self._release(vote_counts(votes, self.table.K))

    def label_counts(self, counts: object) -> np.ndarray:
        """:meth:`label` from the Q queries' vote counts L ∈ [0, K] (a 1-D array)."""
        return self._release(check_counts(counts, self.table.K))

    def _release(self, L: np.ndarray) -> np.ndarray:
        if getattr(self, "_closed", False):
            raise SessionFileError("the session is closed; resume it with LabellingSession.load")
        n = int(L.shape[0])
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        after = self.epsilon_for(self._queries + n)
        if after > self.budget_epsilon:
            if math.isinf(after):
                raise PrivacyBudgetExceeded(
                    f"delta: {self._queries + n} queries of delta_q={self.per_query[1]:.3g} compose to more than "
                    f"delta={self.delta:g} at any epsilon ({self._queries} answered, {self.remaining_queries()} "
                    f"more fit); nothing was released")
            raise PrivacyBudgetExceeded(
                f"budget_epsilon: {n} more queries would spend eps={after:.6g} > budget {self.budget_epsilon:.6g} "
                f"at delta={self.delta:g} ({self._queries} answered, {self.remaining_queries()} more fit); "
                f"nothing was released")
        self._queries += n
        if self.path is not None:
            self.save(self.path)  # recorded before anything is released
        return aggregate_counts(L, self.table.gamma, self._rng, secure=self.secure)

    # -- dp_accounting ----------------------------------------------------------------------
    def dp_event(self):
        """The dp_accounting event of the queries answered so far (see the class docstring).

        Caveat (dp_accounting 0.6): its PLD accountant composes a ``RandomizedResponseDpEvent``
        once whatever the count; compose ``ComposedDpEvent([rr] * Q)`` there instead.
        """
        import dp_accounting

        eps_q, delta_q = self.per_query
        if delta_q > 0.0:
            return dp_accounting.UnsupportedDpEvent()
        rr = dp_accounting.RandomizedResponseDpEvent(noise_parameter=2.0 / (1.0 + math.exp(eps_q)), num_buckets=2)
        return dp_accounting.SelfComposedDpEvent(rr, self._queries)

    # -- state ------------------------------------------------------------------------------
    def state(self) -> dict:
        """The ledger as a JSON-able dict (with its own checksum)."""
        eps_q, delta_q = self.per_query
        d = {"format": FORMAT, "table_fingerprint": self.fingerprint, "params": self.table.params.to_dict(),
             "per_query_epsilon": eps_q, "per_query_delta": delta_q, "budget_epsilon": self.budget_epsilon,
             "delta": self.delta, "queries": self._queries, "epsilon_spent": self.get_epsilon(),
             "secure": self.secure}
        d["checksum"] = _state_checksum(d)
        return d

    def save(self, path: str | os.PathLike) -> None:
        """Write the ledger atomically (JSON); never the generator's state."""
        atomic_write_json(path, self.state())

    @classmethod
    def load(cls, path: str | os.PathLike, table: GammaTable, *, secure: bool | None = None,
             rng: np.random.Generator | int | None = None, resume: bool = True) -> LabellingSession:
        """Resume a session from its state file with its own table (refuses any other table).

        ``secure`` defaults to the saved setting; with ``resume`` (default) later batches are
        recorded to ``path`` again, and the file is claimed first (:mod:`darrm.locking`): a
        session live elsewhere is refused before its state is read, never resumed twice.
        """
        path = v.path("path", path)
        held = claim("path", path, reentrant=False) if resume else None
        try:
            return cls._load(path, table, secure, rng, held)
        except BaseException:
            if held is not None:
                held.release()
            raise

    @classmethod
    def _load(cls, path: Path, table: GammaTable, secure: bool | None, rng, held: Claim | None) -> LabellingSession:
        try:
            state = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SessionFileError(f"{path}: cannot read the session state: {exc}") from None
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            raise SessionFileError(f"{path}: not a {FORMAT} file")
        if state.get("checksum") != _state_checksum(state):
            raise SessionFileError(f"{path}: checksum mismatch: the file is corrupt or was edited")
        v.instance("table", table, GammaTable, "a darrm.GammaTable")
        if table_fingerprint(table) != state["table_fingerprint"]:
            raise SessionFileError(f"{path}: the session was run with another γ table "
                                   f"(fingerprint {state['table_fingerprint'][:12]}…)")
        queries = state["queries"]
        if not isinstance(queries, int) or isinstance(queries, bool) or queries < 0:
            raise SessionFileError(f"{path}: queries must be a non-negative integer")
        return cls(table, budget_epsilon=state["budget_epsilon"], delta=state["delta"],
                   secure=bool(state["secure"]) if secure is None else secure, rng=rng,
                   path=path if held is not None else None, _queries=queries, _resume=True, _claim=held)

    def __repr__(self) -> str:
        return (f"LabellingSession(K={self.table.K}, "
                f"per_query=(eps={self.per_query[0]:g}, delta={self.per_query[1]:g}), "
                f"queries={self._queries}, epsilon_spent={self.get_epsilon():.6g} of {self.budget_epsilon:g} "
                f"at delta={self.delta:g}, secure={self.secure})")
