"""A budgeted labelling session: what an ensemble's owner runs to answer queries with DaRRM.

:class:`LabellingSession` wraps a certified γ table, labels batches of votes with
:func:`darrm.mechanism.aggregate`, and keeps the privacy ledger.  Every labelled query (one vote
vector, one released bit) is (ε_q, δ_q)-DP for the table's parameters — (mε, δ) for a
:class:`darrm.PrivacyParams` table, (target_eps, target_delta) for a :class:`darrm.DisjointParams`
one — under the table's neighbouring relation, and much more precisely it is dominated by the
table's own privacy-profile pair (:mod:`darrm.privacy.profile`).  How Q queries add up depends on
the members, which the caller must state (``member_randomness``; :mod:`darrm.accounting.queries`):

* ``"fresh"`` — members answer each query with fresh randomness: the session composes the table's
  dominating pair by PLD (:class:`darrm.accounting.queries.QueryAccountant`, pessimistic
  discretisation), tight and adaptive (Zhu, Dong & Wang 2022);
* ``"fixed"`` — the same trained members answer every query: only post-processing of the members'
  own guarantees is claimed (the same ε for any number of queries).

A table designed for a total budget (:func:`darrm.design_for_budget`) is charged by the same
accountant as every other table: its closed forms include the certified Gaussian-DP dominance a
design of members on disjoint shards (or in groups) charges (:func:`darrm.accounting.queries.gdp_bound`,
read from the table itself), so the Q_rec queries a table was designed for compose to its recorded
total, at every door (this session, ``darrm account queries``, :func:`~darrm.accounting.composed_epsilon`,
:func:`darrm.verify_charged_total`).  The record is re-certified when the session is created (its member
model's verifier): a table that does not meet it (an edited record) is refused.

ε(δ_total) is reported at the session's δ_total like Opacus's ``accountant.get_epsilon(delta)``;
the generic bound (Q identical (ε_q, δ_q) queries, Kairouz, Oh & Viswanath 2015 Theorem 3.3) stays
available for comparison (:meth:`LabellingSession.generic_epsilon_for`).

The budget is enforced *before* anything is released: a batch that would take ε(δ_total) past
``budget_epsilon`` raises :class:`PrivacyBudgetExceeded` and releases nothing.  With a state file
(``path=`` or :meth:`LabellingSession.load`), the spent queries are written (atomically) before the
labels are returned, so a crash never forgets a release.

The state file is written by the rule of every output (:mod:`darrm.atomic`): its path is resolved
once (a symlinked ledger updates the file it names; the link stays), a device or FIFO is refused,
and a ``chmod 444`` ledger keeps its mode.  The claim (:mod:`darrm.locking`) is taken *before* the
state file's existence is checked, so two sessions created on one path at the same moment cannot
both start from zero.  Each batch is appended to the ledger's journal before the ledger is saved
(:mod:`darrm.accounting.ledger_file`: what the checksum detects, why a lowered count cannot be
loaded silently, and the threat model).  A batch whose journal append fails is refused and not
charged; a batch whose ledger save fails (full disk) *is* charged — in memory and in the journal —
and its labels are not returned: the safe direction, an unreleased batch counted as spent.

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
from darrm.atomic import atomic_write_json, resolve_target
from darrm.errors import CertificationError, DarrmError, ParameterError
from darrm.locking import Claim, claim
from darrm.logs import get_logger
from darrm.models import model_of
from darrm.neighboring import NeighboringRelation
from darrm.table import GammaTable
from darrm.verification import certify_table

from .ledger_file import (
    SessionFileError,
    append_journal,
    journal_path,
    journal_terms,
    journal_total,
    read_ledger,
)
from .queries import (
    UNBOUNDED,
    QueryAccountant,
    bound_name,
    check_member_randomness,
    derived_member_randomness,
    exceeds_quickly,
    fixed_members_bound,
    has_record_groups,
    homogeneous_epsilon,
    record_group_bounds,
)
from .table_identity import per_query_budget, table_fingerprint

__all__ = ["FORMAT", "LabellingSession", "PrivacyBudgetExceeded", "SessionFileError", "table_fingerprint"]

#: the state file's format tag (/2 records ``member_randomness`` and the batches; /1 files are read
#: with ``member_randomness`` given to :meth:`LabellingSession.load`)
FORMAT = "darrm-labelling-session/2"
FORMATS = ("darrm-labelling-session/1", FORMAT)


class PrivacyBudgetExceeded(DarrmError):
    """A batch of queries would take the session past its privacy budget; nothing was released."""




def _state_checksum(state: dict) -> str:
    body = {k: val for k, val in state.items() if k != "checksum"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class LabellingSession:
    """Label batches of votes with a certified γ table within a total privacy budget.

    Args:
        table: the γ table (:func:`darrm.solve` / :func:`darrm.load`); certified on creation
            (:func:`darrm.certify`), an uncertified table raises :class:`darrm.CertificationError`.
        budget_epsilon: the largest total ε the session may spend, at δ_total = ``delta``.
        member_randomness: "fresh" (members answer each query with fresh randomness: the tight
            PLD accountant) or "fixed" (the same trained members answer every query: only
            post-processing of their own guarantees); required, except where the member model
            settles it (:func:`~darrm.accounting.queries.derived_member_randomness`: non-private or
            local-RR members on disjoint shards are "fresh").
        delta: δ_total at which the spent ε is reported and the budget enforced; must be at least
            1 − (1 − δ_q)^Q for Q queries to be answerable at all.
        secure: draw the mechanism's coins from the OS CSPRNG (:mod:`darrm.secure_random`).
        rng: numpy Generator or seed for the coins when ``secure`` is False.
        path: a state file; when given, every batch is recorded there before its labels are returned.

    Interoperability with ``dp_accounting``: :meth:`pld` exports the composition (fresh members)
    as a ``PrivacyLossDistribution`` to compose with other mechanisms.  :meth:`dp_event` gives a
    dp_accounting event only for pure-DP queries: ``ComposedDpEvent([rr] * Q)`` with rr the
    ε_q-randomised response (the generic bound, which dominates every ε_q-DP query; account it with
    ``neighboring_relation=REPLACE_ONE``), which both the PLD and the RDP accountants compose Q times
    (``SelfComposedDpEvent(rr, Q)`` is composed *once* by dp_accounting 0.6's PLD accountant); for
    δ_q > 0 it returns ``UnsupportedDpEvent()``, which every accountant refuses.

    Examples:
        Five members, each (0.5, 10⁻⁵)-DP, label four queries within a total ε of 2 at
        δ_total = 10⁻⁴; the members answer every query with fresh randomness:

        >>> import numpy as np
        >>> import darrm
        >>> from darrm.accounting import LabellingSession
        >>> table = darrm.solve(darrm.PrivacyParams(K=5, m=1, eps=0.5, member_delta=1e-5))
        >>> session = LabellingSession(table, member_randomness="fresh", budget_epsilon=2.0,
        ...                            delta=1e-4, rng=0)
        >>> votes = np.array([[1, 1, 1, 1, 1], [0, 0, 0, 0, 0], [1, 0, 1, 0, 1]])
        >>> session.label(votes)
        array([1, 0, 1])
        >>> session.queries, round(session.epsilon_spent, 2), session.remaining_queries()
        (3, 1.5, 1)
        >>> session.label(votes[:1])
        array([1])
        >>> session.label(votes[:1])
        Traceback (most recent call last):
        ...
        darrm.accounting.session.PrivacyBudgetExceeded: budget_epsilon: 1 more queries would spend ...
    """

    def __init__(self, table: GammaTable, *, budget_epsilon: float, delta: float,
                 member_randomness: str | None = None, secure: bool = False,
                 rng: np.random.Generator | int | None = None, path: str | os.PathLike | None = None,
                 _queries: int = 0, _resume: bool = False, _claim: Claim | None = None,
                 _batches: list | None = None):
        self._claim: Claim | None = None
        v.instance("table", table, GammaTable, "a darrm.GammaTable")
        cert = certify_table(table)
        if not cert.certified:
            raise CertificationError(f"refusing a session with a table that is not private for its parameters "
                                     f"(certificate bound {cert.violation:.3e} > 0)")
        self.table = table
        self.budget_epsilon = v.positive("budget_epsilon", budget_epsilon)
        self.delta = v.open_unit("delta", delta)
        self.member_randomness = derived_member_randomness(table, member_randomness)
        self.secure = v.flag("secure", secure)
        self._rng = v.generator("rng", rng)  # checked even when secure ignores it
        # resolved once: a symlinked ledger is claimed, checked and written as the file it names
        self.path = None if path is None else resolve_target(v.path("path", path), name="path")
        self.per_query = per_query_budget(table)
        self.fingerprint = table_fingerprint(table)
        self._queries = int(_queries)
        self._batches: list[list] = [list(b) for b in (_batches or ([[self.fingerprint, self._queries]]
                                                                     if self._queries else []))]
        # the accountant of :func:`darrm.accounting.queries.composed_epsilon` (no grid of its own): the
        # session, ``darrm account queries`` and the API give one number for one table and count
        self._accountant = QueryAccountant(self.member_randomness)
        if self.member_randomness == "fixed":
            fixed_members_bound(table, delta_total=self.delta)  # members with no fixed-member bound: refused now
        self._eps_cache: dict[tuple[int, float], float] = {}
        if self.member_randomness == "fresh":
            self._check_design()
        if self.path is not None:
            # one live session per ledger, in any process: two would each write their own count.
            # Claimed *before* the existence check: two creations at one moment cannot both pass it.
            self._claim = _claim if _claim is not None else claim("path", self.path, reentrant=False)
            try:
                if not _resume and (os.path.lexists(self.path) or os.path.lexists(journal_path(self.path))):
                    raise SessionFileError(f"{self.path}: a session state (or its journal) exists there; resume it "
                                           f"with LabellingSession.load (a new session would reset its ledger)")
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
        """ε_total of ``queries`` answers at δ_total by the session's accountant; cached per (count, δ).

        The accountant is the module docstring's: the table's pair composed by PLD for fresh members,
        the members' post-processing bound for fixed ones.

        Args:
            queries: the number of answers Q.
            delta: δ_total (default: the session's δ).

        Returns:
            ε_total, or inf where no finite ε exists at that δ.

        Raises:
            ParameterError: naming ``delta``, outside (0, 1).
        """
        d = self.delta if delta is None else v.open_unit("delta", delta)
        q = v.count("queries", queries, minimum=0)
        if q == 0:
            return 0.0
        key = (q, d)
        if key not in self._eps_cache:
            if len(self._eps_cache) > 4096:
                self._eps_cache.clear()
            self._eps_cache[key] = self._accountant.get_epsilon(d, extra=[(self.table, q)])
        return self._eps_cache[key]

    def _check_design(self) -> None:
        """Re-certify the total a table designed for a total budget records (its member model's verifier,
        :func:`darrm.accounting.budget.verify_charged_total`); nothing for other tables.

        Raises:
            CertificationError: the table does not meet its recorded total (an edited record)."""
        if "total_budget" not in self.table.info and "group_budgets" not in self.table.info:
            return  # the designers (and their LP imports) are not needed
        from .budget import verify_charged_total

        verify_charged_total(self.table)

    def group_epsilons_for(self, queries: int, delta: float | None = None) -> tuple[float, ...] | None:
        """Each record group's ε_total of ``queries`` answers at δ_total, for a table of record groups
        (:func:`darrm.accounting.queries.record_group_bounds`: fresh members, each group's own pair, the
        numbers ``darrm account queries`` prints); None for other tables.  A record's loss is its own
        group's, so the largest is :meth:`epsilon_for`, what the session charges every record.

        Args:
            queries: the number of answers Q (≥ 1).
            delta: δ_total (default: the session's δ).

        Returns:
            One ε_total per record group, in the table's group order; None when the table has no record
            groups.

        Raises:
            ParameterError: naming ``queries`` or ``delta``."""
        d = self.delta if delta is None else v.open_unit("delta", delta)
        q = v.count("queries", queries)
        if not has_record_groups(self.table):
            return None
        return tuple(b.epsilon for b in record_group_bounds(
            self.table, q, member_randomness=self.member_randomness, delta_total=d,
            value_discretization_interval=self._accountant.value_discretization_interval))

    def generic_epsilon_for(self, queries: int, delta: float | None = None) -> float:
        """The generic bound, for comparison: ``queries`` identical (ε_q, δ_q) queries composed exactly.

        Kairouz, Oh & Viswanath 2015, Theorem 3.3.

        Args:
            queries: the number of answers Q.
            delta: δ_total (default: the session's δ).

        Returns:
            ε_total, or inf where δ_total < 1 − (1 − δ_q)^Q.

        Raises:
            ParameterError: naming ``delta``, outside (0, 1).
        """
        d = self.delta if delta is None else v.open_unit("delta", delta)
        q = v.count("queries", queries, minimum=0)
        if q == 0:
            return 0.0
        return homogeneous_epsilon(*self.per_query, q, d)

    @property
    def bound(self) -> str:
        """The name of the bound the session reports (:mod:`darrm.accounting.queries`)."""
        return bound_name(self.member_randomness, self.table)

    def get_epsilon(self, delta: float | None = None) -> float:
        """ε spent so far at δ_total = ``delta`` (default: the session's δ), like Opacus's accountant.

        Args:
            delta: δ_total (default: the session's δ).

        Returns:
            :meth:`epsilon_for` of the queries answered so far.
        """
        return self.epsilon_for(self._queries, delta)

    @property
    def epsilon_spent(self) -> float:
        """ε spent so far at the session's δ."""
        return self.get_epsilon()

    def remaining_queries(self) -> int | str:
        """How many more queries fit in the budget (ε(δ_total) is non-decreasing in the count), or
        :data:`~darrm.accounting.queries.UNBOUNDED` (the string ``"unbounded"``) where ε does not
        depend on the count: fixed members, whose post-processing bound holds for any number of
        queries (0 if even that bound exceeds the budget).  For fresh members the search stops at
        the largest count whose total can be computed (:func:`~darrm.accounting.queries.choose_interval`):
        the count returned then fits, and more may.

        Returns:
            The number of further queries that fit, or ``"unbounded"``.
        """
        if self.member_randomness == "fixed":
            return UNBOUNDED if self.epsilon_for(max(self._queries, 1)) <= self.budget_epsilon else 0

        def fits(extra: int) -> bool:
            return self.epsilon_for(self._queries + extra) <= self.budget_epsilon

        def computable(extra: int) -> bool:
            try:
                return fits(extra) or True
            except ParameterError:
                return False

        if not fits(1):
            return 0
        lo, hi = 1, 2
        while computable(hi) and fits(hi):
            lo, hi = hi, hi * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if computable(mid) and fits(mid) else (lo, mid)
        return lo

    # -- labelling --------------------------------------------------------------------------
    def label(self, votes: object) -> np.ndarray:
        """Private majority labels for a batch of (Q, K) 0/1 votes (one query: a (1, K) matrix).

        Args:
            votes: the (Q, K) matrix of 0/1 votes, one row per query.

        Returns:
            The Q released labels (0/1, int64).

        Raises:
            PrivacyBudgetExceeded: the batch would take ε(δ_total) past the budget; nothing released.
            ParameterError: malformed votes; nothing charged.
        """
        return self._release(model_of(self.table.params).counts(votes, self.table.params))

    def label_counts(self, counts: object) -> np.ndarray:
        """:meth:`label` from the Q queries' vote counts L ∈ [0, K] (a 1-D array).

        Args:
            counts: the Q vote counts.

        Returns:
            The Q released labels (0/1, int64).

        Raises:
            PrivacyBudgetExceeded: the batch would take ε(δ_total) past the budget; nothing released.
            ParameterError: malformed counts; nothing charged.
        """
        return self._release(model_of(self.table.params).check_counts(counts, self.table.params))

    def _release(self, L: np.ndarray) -> np.ndarray:
        if getattr(self, "_closed", False):
            raise SessionFileError("the session is closed; resume it with LabellingSession.load")
        n = int(L.shape[0])
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        if exceeds_quickly([(self.table, self._queries + n)], self.budget_epsilon, self.delta,
                           self.member_randomness):
            raise PrivacyBudgetExceeded(
                f"budget_epsilon: {n} more queries would spend more than {self.budget_epsilon:.6g} at delta="
                f"{self.delta:g} (a lower bound from the losses' moments already does; {self._queries} answered); "
                f"nothing was released")
        try:
            self._refuse_early(n)
            after = self.epsilon_for(self._queries + n)
        except ParameterError as exc:
            raise PrivacyBudgetExceeded(f"budget_epsilon: {n} more queries cannot be accounted ({exc}); nothing "
                                        f"was released") from None
        if after > self.budget_epsilon:
            if math.isinf(after):
                raise PrivacyBudgetExceeded(
                    f"delta: {self._queries + n} queries of delta_q={self.per_query[1]:.3g} compose to more than "
                    f"delta={self.delta:g} at any epsilon ({self._queries} answered; remaining_queries() says how "
                    f"many more fit); nothing was released")
            raise PrivacyBudgetExceeded(  # no remaining_queries() here: its search can take a minute
                f"budget_epsilon: {n} more queries would spend eps={after:.6g} > budget {self.budget_epsilon:.6g} "
                f"at delta={self.delta:g} ({self._queries} answered; remaining_queries() says how many more fit); "
                f"nothing was released")
        if self.path is not None:  # the journal first: its count only grows (ledger_file)
            append_journal(self.path, self.fingerprint, n, self._queries + n, self._terms())
        self._queries += n
        self._batches.append([self.fingerprint, n])
        if self.path is not None:
            self.save(self.path)  # recorded before anything is released
        return model_of(self.table.params).release(L, self.table.gamma, self.table.params, self._rng, self.secure)

    def _refuse_early(self, n: int) -> None:
        """Refuse a batch of ``n`` queries already when a prefix of it (1, 2, 4, … queries) spends
        more than the budget: ε(δ_total) is non-decreasing in the count (composing one more
        mechanism never lowers the hockey-stick divergence), so the whole batch would too.  The
        composition of a few queries is cheap; that of millions (a PLD self-composed 3·10⁶ times)
        takes a minute and gigabytes, which a batch far past the budget must not cost."""
        k = 1
        while k < n:
            spent = self.epsilon_for(self._queries + k)
            if math.isinf(spent):
                raise PrivacyBudgetExceeded(
                    f"delta: {n} more queries of delta_q={self.per_query[1]:.3g} compose to more than "
                    f"delta={self.delta:g} at any epsilon (their first {k} already do; {self._queries} answered; "
                    "remaining_queries() says how many more fit); nothing was released")
            if spent > self.budget_epsilon:
                raise PrivacyBudgetExceeded(
                    f"budget_epsilon: {n} more queries would spend more than eps={spent:.6g} (their first {k} "
                    f"already do) > budget {self.budget_epsilon:.6g} at delta={self.delta:g} ({self._queries} "
                    "answered; remaining_queries() says how many more fit); nothing was released")
            k *= 2

    # -- dp_accounting ----------------------------------------------------------------------
    def dp_event(self):
        """The dp_accounting event of the queries answered so far (see the class docstring):
        ``ComposedDpEvent([rr] * Q)`` for pure-DP queries, ``UnsupportedDpEvent()`` otherwise.

        Raises:
            ParameterError: fixed members: Q-fold per-query composition does not apply to them
                (their bound is post-processing of the members' guarantees, :meth:`get_epsilon`)."""
        import dp_accounting

        if self.member_randomness == "fixed":
            raise ParameterError("member_randomness", "fixed members have no per-query event: the same trained "
                                                      "members answer every query, and their bound (get_epsilon) "
                                                      "is post-processing of their own guarantees, for any Q")
        eps_q, delta_q = self.per_query
        if delta_q > 0.0:
            return dp_accounting.UnsupportedDpEvent()
        if self._queries == 0:
            return dp_accounting.NoOpDpEvent()
        rr = dp_accounting.RandomizedResponseDpEvent(noise_parameter=2.0 / (1.0 + math.exp(eps_q)), num_buckets=2)
        return dp_accounting.ComposedDpEvent([rr] * self._queries)

    def pld(self):
        """The queries answered so far as a dp_accounting ``PrivacyLossDistribution`` (fresh members:
        the PLD of the table's dominating pair, Q-fold, pessimistic by connect-the-dots), at
        dp_accounting's default interval (1e-4), so it composes with PLDs built at their default.
        Symmetric, under the table's neighbouring relation (:attr:`neighboring_relation`).

        Raises:
            ParameterError: fixed members (no per-query composition is claimed) or no queries yet."""
        return self._accountant.pld(extra=[(self.table, self._queries)] if self._queries else [])

    @property
    def neighboring_relation(self) -> NeighboringRelation:
        """Which neighbouring data sets the exports (:meth:`pld`, :meth:`dp_event`) are about: the
        table's own (``params.neighboring``).  One query is (ε_q, δ_q)-DP, and dominated by its pair,
        for the data sets between which each affected member's own guarantee holds: members trained
        by DP-SGD under add-or-remove-one give a DaRRM answer private under add-or-remove-one, which
        then composes with a DP-SGD PLD of the same relation (docs/accounting.md, *Combining with DP-SGD*)."""
        return self.table.params.neighboring

    def _terms(self) -> dict:
        """What each journal line records beside the count (:func:`.ledger_file.journal_terms`)."""
        return {"accountant": self.bound, "member_randomness": self.member_randomness,
                "budget_epsilon": self.budget_epsilon, "delta": self.delta}

    # -- state ------------------------------------------------------------------------------
    def state(self) -> dict:
        """The ledger as a JSON-able dict (with its own checksum).

        Returns:
            The format tag, the table's fingerprint and parameters, the per-query and total budgets,
            the queries answered and ε spent, the batches and the settings.
        """
        eps_q, delta_q = self.per_query
        d = {"format": FORMAT, "table_fingerprint": self.fingerprint, "params": self.table.params.to_dict(),
             "per_query_epsilon": eps_q, "per_query_delta": delta_q, "budget_epsilon": self.budget_epsilon,
             "delta": self.delta, "queries": self._queries, "epsilon_spent": self.get_epsilon(),
             "member_randomness": self.member_randomness, "bound": self.bound,
             "batches": [list(b) for b in self._batches], "secure": self.secure,
             "journal": self.path is not None}
        d["checksum"] = _state_checksum(d)
        return d

    def save(self, path: str | os.PathLike) -> None:
        """Write the ledger atomically (JSON); never the generator's state.

        Args:
            path: the state file.
        """
        atomic_write_json(path, self.state())

    @classmethod
    def load(cls, path: str | os.PathLike, table: GammaTable, *, secure: bool | None = None,
             rng: np.random.Generator | int | None = None, resume: bool = True,
             member_randomness: str | None = None) -> LabellingSession:
        """Resume a session from its state file with its own table (refuses any other table).

        ``secure`` defaults to the saved setting; with ``resume`` (default) later batches are
        recorded to ``path`` again, and the file is claimed first (:mod:`darrm.locking`): a
        session live elsewhere is refused before its state is read, never resumed twice.

        Args:
            path: the state file.
            table: the table the session was created with.
            secure: draw the coins from the OS CSPRNG (default: the saved setting).
            rng: numpy Generator or seed for the coins when not secure.
            resume: record later batches to ``path`` again (claiming it).
            member_randomness: read from the file; give it only for a /1 file (which lacks it).

        Returns:
            The session, with the queries already answered counted.

        Raises:
            SessionFileError: ``path`` is not a session's state file, is corrupt, or is live elsewhere.
            ParameterError: ``table`` is not the session's table, or a parameter is malformed.
        """
        try:  # resolved once; a device or FIFO is refused before any lock file is made next to it
            path = resolve_target(v.path("path", path), name="path")
        except ParameterError as exc:
            raise SessionFileError(f"not a session state file: {exc}") from None
        held = claim("path", path, reentrant=False) if resume else None
        try:
            return cls._load(path, table, secure, rng, held, member_randomness)
        except BaseException:
            if held is not None:
                held.release()
            raise

    @classmethod
    def _load(cls, path: Path, table: GammaTable, secure: bool | None, rng, held: Claim | None,
              member_randomness: str | None = None) -> LabellingSession:
        state = read_ledger(path, FORMATS)  # strict, bounded, typed (SessionFileError otherwise)
        if state.get("checksum") != _state_checksum(state):
            raise SessionFileError(f"{path}: checksum mismatch: the file is corrupt or was edited")
        v.instance("table", table, GammaTable, "a darrm.GammaTable")
        if table_fingerprint(table) != state["table_fingerprint"]:
            raise SessionFileError(f"{path}: the session was run with another γ table "
                                   f"(fingerprint {state['table_fingerprint'][:12]}…)")
        queries = state["queries"]
        mr = state.get("member_randomness", member_randomness)
        if mr is None:
            raise SessionFileError(f"{path}: an older ledger without member_randomness; resume it with "
                                   f"LabellingSession.load(..., member_randomness='fresh' or 'fixed')")
        if member_randomness is not None and member_randomness != mr:
            raise SessionFileError(f"{path}: the session was run with member_randomness={mr!r}")
        batches = state.get("batches")
        if batches is not None and not (
                isinstance(batches, list)
                and all(isinstance(b, list) and len(b) == 2 and isinstance(b[0], str) and isinstance(b[1], int)
                        and not isinstance(b[1], bool) and b[1] > 0 for b in batches)
                and sum(b[1] for b in batches) == queries):
            raise SessionFileError(f"{path}: the batches do not add up to the queries")
        if (state["params"] != json.loads(json.dumps(table.params.to_dict()))
                or (state["per_query_epsilon"], state["per_query_delta"]) != per_query_budget(table)):
            raise SessionFileError(f"{path}: the recorded params or per-query budget differ from the table's")
        try:
            mr = check_member_randomness(mr)
            v.positive("budget_epsilon", state["budget_epsilon"])
            v.open_unit("delta", state["delta"])
        except DarrmError as exc:
            raise SessionFileError(f"{path}: invalid session state: {exc}") from None
        terms = {"accountant": state.get("bound", bound_name(mr, table)), "member_randomness": mr,
                 "budget_epsilon": state["budget_epsilon"], "delta": state["delta"]}
        queries, batches = _reconcile(path, state, queries, batches, state["table_fingerprint"], held is not None,
                                      terms)
        return cls(table, budget_epsilon=state["budget_epsilon"], delta=state["delta"], member_randomness=mr,
                   secure=state["secure"] if secure is None else secure, rng=rng,
                   path=path if held is not None else None, _queries=queries, _resume=True, _claim=held,
                   _batches=batches)

    def __repr__(self) -> str:
        return (f"LabellingSession(K={self.table.K}, "
                f"per_query=(eps={self.per_query[0]:g}, delta={self.per_query[1]:g}), "
                f"member_randomness={self.member_randomness!r}, "
                f"queries={self._queries}, epsilon_spent={self.get_epsilon():.6g} of {self.budget_epsilon:g} "
                f"at delta={self.delta:g}, secure={self.secure})")


def _reconcile(path: Path, state: dict, queries: int, batches: list | None, fingerprint: str,
               resume: bool, terms: dict) -> tuple[int, list | None]:
    """The count to charge: the larger of the ledger's and its journal's (ledger_file).  A ledger
    that names its journal refuses to load without it; a legacy ledger (no journal yet) gets one,
    at its count, when resumed.  A difference is charged (never dropped) and logged."""
    total = journal_total(path)
    recorded = journal_terms(path)
    if recorded is not None:
        if terms != recorded:
            raise SessionFileError(f"{path}: the ledger's terms {terms} disagree with those its journal charged the "
                                   f"queries under {recorded}: the ledger was edited; refusing it")
    if total is None and state.get("journal") and queries > 0:
        raise SessionFileError(f"{journal_path(path)}: the ledger's journal is missing; refusing to trust the "
                               f"ledger's count alone (restore the journal)")
    count = max(queries, total or 0)
    if count != queries:
        get_logger("accounting.session").warning(
            "%s records %d queries, its journal %d: charging %d (a crash between the two writes, or an edit "
            "of the ledger)", path, queries, total, count)
        batches = [*(batches or ([[fingerprint, queries]] if queries else [])), [fingerprint, count - queries]]
    if resume and (total or 0) < count:
        append_journal(path, fingerprint, count - (total or 0), count)
    return count, batches
