"""The restricted master LP of constraint generation, kept alive between rounds.

    minimise c·x   subject to   r·x ≤ rhs for every row r of the working set,   0 ≤ x ≤ 1.

Two interchangeable back ends, both solved by HiGHS:

* :class:`HighsRestrictedLP` (default) holds one ``highspy.Highs`` model for the whole
  run: new cuts are appended with ``addRows`` and the dual simplex restarts from the
  previous optimal basis (the old point stays dual feasible when rows are added), and
  rows that stayed slack for a while are deleted.  At K = 1001 (Δ = 0) a working set of
  90 k dense rows took 31 s per round through cvxpy (re-canonicalised every round) and
  12 s cold in HiGHS; warm-started, a round's re-solve is a few pivots.
* :class:`CvxpyRestrictedLP` rebuilds the problem with cvxpy every round (the modelling
  layer of the full LP, :func:`darrm.solver.gamma_opt.solve_gamma_opt` with ``method="full"``);
  slower, kept as the reference the tests compare to.

Either way the caller gets the primal point *and* the row duals y ≥ 0, from which
:func:`lagrangian_bound` gives a lower bound on the full LP that holds for ANY y ≥ 0:
for every x in the box with R x ≤ rhs (in particular every feasible point of the full
LP, whose rows include R),

    c·x ≥ c·x + yᵀ(R x − rhs) = (c + Rᵀy)·x − rhs·Σy ≥ Σ_l min(0, (c + Rᵀy)_l) − rhs·Σy.

So the bound's validity does not depend on the solver's accuracy, only its tightness does.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys

import numpy as np

from ..errors import ParameterError, SolveError


@contextlib.contextmanager
def quiet_native_stdout():
    """Silence what native code writes to file descriptor 1 inside the block.

    highspy ≥ 1.16 prints a banner on stdout when a ``Highs`` object is constructed, before any
    option can turn output off; on stdout it would corrupt the CLI's output (`| head -1`, JSON).
    The C library's buffer is flushed before fd 1 is restored, so nothing leaks out later."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # no real descriptor (e.g. captured by Python)
        yield
        return
    sys.stdout.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), fd)
            try:
                yield
            finally:
                with contextlib.suppress(Exception):
                    ctypes.CDLL(None).fflush(None)
    finally:
        os.dup2(saved, fd)
        os.close(saved)

#: Tighter than HiGHS's 1e-7 defaults, so the certification repair rarely needs to act
#: and constraint generation converges to ~1e-10.  ``small_matrix_value`` 1e-12 (HiGHS's
#: minimum; default 1e-9) keeps the long binomial tails of the rows: dropping them left LP
#: points ~1e-9 outside the exact rows and the repaired table 1.02e-9 from the optimum
#: (K = 101, m = 3, Δ = 0: gap 1.02e-9 → 2e-12; disjoint K = 1001 3-RR likewise).
HIGHS_DEFAULTS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10,
                  "small_matrix_value": 1e-12}


#: HiGHS's own values of options a retry may set and nothing here sets by default (a retry that
#: would not change the model's effective options is skipped)
HIGHS_OWN = {"simplex_scale_strategy": 1}

#: what a failed restricted-LP solve is retried with, in order, each on a fresh model (after a plain
#: fresh model).  (0) HiGHS's own scaling, for models given another one (pure DP,
#: :data:`darrm.solver.pure_rounds.PURE_HIGHS`; seen at K = 2001, m = 10, Δ = 0, round 40, 47 k rows:
#: status "Unknown" from the warm model and every retry after it, with scale strategy 4 kept; not
#: yet seen to cure it).  Nothing rests on the restricted LP being solved exactly (see ``DROP``):
#: privacy comes from the exact sweep and certificate, and the lower bound holds for any y ≥ 0.
#: (1) HiGHS's own ``small_matrix_value`` (1e-9): seen once at K = 1001, Δ = 0 (status "Not Set"
#: after ~70 rounds), HiGHS can fail on the 1e-12 entries it keeps by default here; (2) the interior
#: point method (with crossover, so a basis is still there) at tolerances 1e-9: seen at K = 2001,
#: m = 10, Δ = 0 (round 18, 22.6k dense rows, "Not Set" from the warm, the fresh and the (1) model).
RETRIES: tuple[dict, ...] = (
    {"simplex_scale_strategy": 1},
    {"small_matrix_value": 1e-9},
    {"small_matrix_value": 1e-9, "solver": "ipm", "run_crossover": "on",
     "primal_feasibility_tolerance": 1e-9, "dual_feasibility_tolerance": 1e-9},
)


def lagrangian_bound(c: np.ndarray, rows: np.ndarray, rhs: float, y: np.ndarray) -> float:
    """Σ_l min(0, (c + Rᵀy)_l) − rhs·Σy with y clipped to ≥ 0 (module docstring): a lower
    bound on min c·x over {0 ≤ x ≤ 1, R x ≤ rhs} ⊇ the full LP's feasible set."""
    y = np.maximum(np.asarray(y, dtype=np.float64), 0.0)
    red = c + (rows.T @ y if rows.shape[0] else 0.0)
    return float(np.minimum(red, 0.0).sum() - rhs * y.sum())


class RestrictedLP:
    """Interface: ``add(rows)``, ``solve() -> (x, y)``, ``keep(mask)``, ``rows``."""

    def __init__(self, c: np.ndarray, rhs: float, solver_opts: dict | None = None):
        self.c = np.asarray(c, dtype=np.float64)
        self.rhs = float(rhs)
        self.opts = dict(solver_opts or {})
        self.rows = np.zeros((0, self.c.shape[0]))

    def set_objective(self, c: np.ndarray) -> None:
        self.c = np.asarray(c, dtype=np.float64)

    def add(self, rows: np.ndarray) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def keep(self, mask: np.ndarray) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def solve(self) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - interface
        raise NotImplementedError

    def basis(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The last solve's optimal basis (see :class:`HighsRestrictedLP`); None if unknown."""
        return None


class HighsRestrictedLP(RestrictedLP):
    """Incremental, warm-started HiGHS model (module docstring)."""

    #: coefficients below this (absolute) are left out of the sparse rows handed to HiGHS: its
    #: ``small_matrix_value`` (1e-12 here, its minimum) would drop them anyway, after copying and
    #: scanning them (pmf rows at K = 1001 are mostly such tails).  The
    #: restricted LP is then a slightly perturbed relaxation.  Nothing rests on it being
    #: exact: privacy comes from the exact sweep and certificate, and the lower bound is
    #: evaluated on the exact rows kept in ``self.rows`` (valid for any y ≥ 0).
    DROP = 1e-12

    def __init__(self, c: np.ndarray, rhs: float, solver_opts: dict | None = None, defaults: dict | None = None):
        super().__init__(c, rhs, solver_opts)
        self._user = dict(self.opts)  # the caller's own options: a retry never changes them
        self.opts = {**(defaults or {}), **self.opts}  # ``defaults``: this solver's choice, a retry may change it
        self._new_model()

    def _new_model(self) -> None:
        import highspy

        with quiet_native_stdout():
            self._h = h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        for k, v in {**HIGHS_DEFAULTS, **self.opts}.items():
            h.setOptionValue(k, v)
        n = self.c.shape[0]
        h.addVars(n, np.zeros(n), np.ones(n))
        h.changeColsCost(n, np.arange(n, dtype=np.int32), self.c)

    def set_objective(self, c: np.ndarray) -> None:
        super().set_objective(c)
        n = self.c.shape[0]
        self._h.changeColsCost(n, np.arange(n, dtype=np.int32), self.c)

    def add(self, rows: np.ndarray) -> None:
        rows = np.asarray(rows, dtype=np.float64)
        if rows.shape[0] == 0:
            return
        import scipy.sparse as sp

        m = sp.csr_matrix(np.where(np.abs(rows) < self.DROP, 0.0, rows))
        self._h.addRows(m.shape[0], np.full(m.shape[0], -np.inf), np.full(m.shape[0], self.rhs), m.nnz,
                        m.indptr[:-1].astype(np.int32), m.indices.astype(np.int32), m.data)
        self.rows = np.concatenate([self.rows, rows])

    def keep(self, mask: np.ndarray) -> None:
        drop = np.flatnonzero(~np.asarray(mask, dtype=bool)).astype(np.int32)
        if drop.size:
            self._h.deleteRows(drop.size, drop)
            self.rows = self.rows[np.asarray(mask, dtype=bool)]

    def solve(self) -> tuple[np.ndarray, np.ndarray]:
        import highspy

        h = self._h
        self._run(h)
        status = h.getModelStatus()
        # each retry is a fresh model with the working set (a warm start can stall on a degenerate
        # basis after rows were deleted or the costs changed), then with the options of RETRIES
        for extra in ({},) + RETRIES:
            if status == highspy.HighsModelStatus.kOptimal:
                break
            effective = {**HIGHS_OWN, **HIGHS_DEFAULTS, **self.opts}
            if extra and (all(effective.get(k) == v for k, v in extra.items())
                          or any(k in self._user and self._user[k] != v for k, v in extra.items())):
                continue  # already tried with these options, or the caller chose otherwise
            rows, self.rows = self.rows, np.zeros((0, self.c.shape[0]))
            self.opts = {**self.opts, **extra}
            self._new_model()
            self.add(rows)
            h = self._h
            self._run(h)
            status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise SolveError(f"LP not solved: HiGHS status {h.modelStatusToString(status)!r}")
        if self.opts.get("solver") == "ipm" and "solver" not in self._user:
            # the next rounds warm-start the simplex from the crossover's basis again
            self.opts = {k: v for k, v in self.opts.items() if k not in ("solver", "run_crossover")}
            h.setOptionValue("solver", "choose")
        sol = h.getSolution()
        x = np.asarray(sol.col_value, dtype=np.float64)
        # HiGHS's row dual of a ≤ row in a minimisation is ≤ 0 (∂objective/∂rhs)
        y = -np.asarray(sol.row_dual, dtype=np.float64)
        return x, y

    @staticmethod
    def _run(h) -> None:
        """``h.run()``, any exception of the native solver a :class:`~darrm.errors.SolveError`."""
        try:
            h.run()
        except (ValueError, ArithmeticError, RuntimeError) as exc:
            raise SolveError(f"HiGHS failed: {type(exc).__name__}: {exc}") from exc

    def basis(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(basic columns, basic rows) as boolean masks of the last solve's optimal basis,
        or None when HiGHS has no valid basis.  For exact re-solves on that basis
        (e.g. :func:`darrm.solver.engine._polished`)."""
        b = self._h.getBasis()
        if not b.valid:
            return None
        import highspy

        basic = highspy.HighsBasisStatus.kBasic
        return (np.array([s == basic for s in b.col_status], dtype=bool),
                np.array([s == basic for s in b.row_status], dtype=bool))


class ProximalHighsLP(HighsRestrictedLP):
    """The restricted LP with an ℓ1 proximal term: minimise c·x + μ·‖x − a‖₁ over the same rows
    (a proximal bundle step, anchored at a certified point a; :class:`darrm.solver.pure_rounds.RoundPolicy`).

    Why.  For Δ = 0 at K ≥ 1501 most coordinates of γ carry prior weight below HiGHS's tolerances,
    so the LP point is any vertex there (the tie-break pushes them to 1), violated by ~1e-2 round
    after round, and a segment from a certified point toward it is blocked almost at once (K = 2001:
    steps < 1e-3 after round 37).  The ℓ1 term keeps every coordinate at the anchor unless moving it
    gains more than μ per unit of objective, so the point moves only where the objective asks and the
    rows allow.  Model: n extra columns s ∈ [0, 1] with cost μ and 2n rows x − s ≤ a, −x − s ≤ −a
    (they come first; the working set's rows follow, on x only).

    Nothing rests on this model's optimum: its point is a direction for the exact line search
    (:mod:`darrm.privacy.segment`), certified or cut by the exhaustive sweep, and its duals y ≥ 0 on
    the working-set rows give a valid Lagrangian bound like any y ≥ 0
    (:func:`lagrangian_bound`).
    """

    def __init__(self, c: np.ndarray, rhs: float, anchor: np.ndarray, mu: float | np.ndarray,
                 solver_opts: dict | None = None, defaults: dict | None = None):
        self.anchor = np.clip(np.asarray(anchor, dtype=np.float64), 0.0, 1.0)
        self.mu = np.broadcast_to(np.asarray(mu, dtype=np.float64), self.anchor.shape).copy()
        super().__init__(c, rhs, solver_opts, defaults)

    def _new_model(self) -> None:
        super()._new_model()
        import scipy.sparse as sp

        h, n = self._h, self.c.shape[0]
        h.addVars(n, np.zeros(n), np.ones(n))
        h.changeColsCost(n, np.arange(n, 2 * n, dtype=np.int32), self.mu)
        eye, minus = sp.identity(n, format="csr"), -sp.identity(n, format="csr")
        m = sp.vstack([sp.hstack([eye, minus]), sp.hstack([minus, minus])], format="csr")
        h.addRows(2 * n, np.full(2 * n, -np.inf), np.concatenate([self.anchor, -self.anchor]), m.nnz,
                  m.indptr[:-1].astype(np.int32), m.indices.astype(np.int32), m.data)

    def set_anchor(self, anchor: np.ndarray, mu: float | np.ndarray | None = None) -> None:
        """Move the proximal centre to ``anchor`` (and the weights to ``mu``, one per coordinate or
        one for all): bounds and costs only, so the next solve starts from the last basis."""
        n = self.c.shape[0]
        self.anchor = np.clip(np.asarray(anchor, dtype=np.float64), 0.0, 1.0)
        self._h.changeRowsBounds(2 * n, np.arange(2 * n, dtype=np.int32), np.full(2 * n, -np.inf),  # type: ignore[attr-defined]  # in highspy, not in its stubs
                                 np.concatenate([self.anchor, -self.anchor]))
        if mu is not None:
            mu = np.broadcast_to(np.asarray(mu, dtype=np.float64), (n,))
            if not np.array_equal(mu, self.mu):
                self.mu = mu.copy()
                self._h.changeColsCost(n, np.arange(n, 2 * n, dtype=np.int32), self.mu)

    def keep(self, mask: np.ndarray) -> None:
        mask = np.asarray(mask, dtype=bool)
        drop = np.flatnonzero(~mask).astype(np.int32) + 2 * self.c.shape[0]
        if drop.size:
            self._h.deleteRows(drop.size, drop)
            self.rows = self.rows[mask]

    def solve(self) -> tuple[np.ndarray, np.ndarray]:
        x, y = super().solve()
        n = self.c.shape[0]
        return x[:n], y[2 * n:]


class CvxpyRestrictedLP(RestrictedLP):
    """Rebuilt through cvxpy (+ HiGHS) every solve: the reference back end."""

    def add(self, rows: np.ndarray) -> None:
        self.rows = np.concatenate([self.rows, np.asarray(rows, dtype=np.float64)])

    def keep(self, mask: np.ndarray) -> None:
        self.rows = self.rows[np.asarray(mask, dtype=bool)]

    def solve(self) -> tuple[np.ndarray, np.ndarray]:
        import cvxpy as cp

        n = self.c.shape[0]
        x = cp.Variable(n)
        cons = [x >= 0, x <= 1]
        if self.rows.shape[0]:
            cons.append(self.rows @ x <= self.rhs)
        prob = cp.Problem(cp.Minimize(self.c @ x), cons)
        try:
            with quiet_native_stdout():
                prob.solve(solver=cp.HIGHS, **{**HIGHS_DEFAULTS, **self.opts})
        except (cp.error.SolverError, ValueError, ArithmeticError, RuntimeError) as exc:
            # cvxpy raises ValueError on badly scaled data (rows with entries ~e^{mε} ≥ 1e8, met at mε in [18, 30])
            raise SolveError(f"HiGHS (through cvxpy) failed: {type(exc).__name__}: {exc}") from exc
        if prob.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x.value is None:
            raise SolveError(f"LP not solved: status {prob.status!r}")
        self.status = str(prob.status)
        y = np.asarray(cons[2].dual_value, dtype=np.float64) if self.rows.shape[0] else np.zeros(0)
        return np.asarray(x.value, dtype=np.float64), y


BACKENDS = {"highs": HighsRestrictedLP, "cvxpy": CvxpyRestrictedLP}


def make_restricted_lp(backend: str, c: np.ndarray, rhs: float, solver_opts: dict | None = None,
                       defaults: dict | None = None) -> RestrictedLP:
    """A restricted LP on ``backend``; ``defaults`` (HiGHS back end only) are options of the solver's
    own choosing, under the caller's ``solver_opts``, which a failed solve's retry may change."""
    if backend not in BACKENDS:
        raise ParameterError("lp_backend", f"must be one of {sorted(BACKENDS)}, got {backend!r}")
    if backend == "highs":
        return HighsRestrictedLP(c, rhs, solver_opts, defaults)
    return BACKENDS[backend](c, rhs, solver_opts)
