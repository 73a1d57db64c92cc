"""The one vocabulary of the command lines' JSON output (``--json`` of every command).

One name per concept across ``darrm solve|verify|aggregate|evaluate|demo``, ``darrm account …``,
``darrm shuffle`` and ``darrm account-votes``.  Where Opacus or Google's ``dp_accounting`` name a
concept, their name is used: ``epsilon``, ``delta``, ``noise_multiplier``, ``sample_rate``,
``steps`` (Opacus' ``get_epsilon``/``make_private_with_epsilon``, dp_accounting's
``get_epsilon``/``DpEvent`` fields).  Derived names are built from the same words:
``epsilon_total``/``delta_total`` (after composition), ``epsilon_query``/``delta_query`` (one
query's guarantee), ``target_epsilon``/``target_delta`` (a calibration target, Opacus'
``target_epsilon``), ``epsilon0`` (a member's local ε0).

The library's own records (Python API) keep the paper's short names (``eps``, ``eps0``,
``eps_total``, ``Q``, a shuffle bound's ``"bound"``); :func:`canonical` renames them at the
command-line boundary, in this one place:

* the word ``eps`` → ``epsilon`` and ``eps0`` → ``epsilon0`` inside any key (``eps_total`` →
  ``epsilon_total``, ``target_eps`` → ``target_epsilon``, ``largest_eps0`` → ``largest_epsilon0``);
* ``bound`` → ``kind`` (a shuffle bound's "upper"/"lower", the attribute's name
  :attr:`darrm.accounting.Bound.kind`, and the tag name of prior and member-model records);
* ``Q`` → ``queries`` (the paper tables' name for the number of queries).

:func:`vocabulary` lists every key the JSON output may hold; ``tests/darrm/test_cli_json.py``
runs every ``--json`` command and checks its keys against it, so a new key is a decision
recorded here (and in the CLI section of the README), never an accident.
"""

from __future__ import annotations

from typing import Any

from . import families

#: whole-key renames (library record key → JSON key)
KEY_RENAMES = {"bound": "kind", "Q": "queries"}
#: renames of one ``_``-separated word of a key
WORD_RENAMES = {"eps": "epsilon", "eps0": "epsilon0"}

#: every key the command lines' JSON may contain, by group
VOCABULARY_GROUPS: dict[str, frozenset[str]] = {
    # privacy parameters and guarantees (Opacus / dp_accounting words)
    "privacy": frozenset({
        "epsilon", "delta", "epsilon0", "member_delta", "m", "K", "classes", "n",
        "epsilon_query", "delta_query", "epsilon_total", "delta_total", "delta_prime",
        "epsilon_total_generic", "epsilon_total_optimal", "epsilon_total_optimal_grid",
        "target_epsilon", "target_delta", "largest_epsilon0",
        "noise_multiplier", "sample_rate", "steps", "compositions", "queries", "sigma",
        "epsilon_pld", "epsilon_prv", "epsilon_rdp", "sigma_paper", "sigma_pld", "sigma_rdp",
        "order_paper", "order_table4", "paper_grid_order", "paper_grid_order_min",
        "lam", "tau", "subsampled",
        # darrm account queries (darrm.accounting.queries.QueryBound)
        "member_randomness", "lower_bound", "bracket", "value_discretization_interval",
        # … of a table of record groups on shards: each group's own total, by [copies, eps, delta]
        "record_group_totals", "record_group",
        # a total budget (darrm solve --total-eps …)
        "total_budget", "epsilon_total_composed", "target", "parameter",
        # darrm shuffle --randomizer rr:K+B / geo:K (multi-message and metric protocols)
        "blankets", "distance",
    }),
    # what produced a number
    "provenance": frozenset({
        "method", "accountant", "composition", "kind", "valid", "note", "dataset",
        "results", "bounds",
    }),
    # γ tables (solve, verify, demo, evaluate, aggregate)
    "gamma": frozenset({
        "family", "members", "member_privacy", "groups", "gamma_form", "record_groups", "budget_groups",
        "vote_weights", "gamma", "prior",
        "expected_error", "expected_error_verified", "violation",
        "certified", "verified", "status", "report", "gamma_file", "labels", "labels_file", "secure",
        "seed", "p", "error_curves",
        # SolveReport fields
        "stop", "converged", "optimality_gap", "lp_lower_bound", "gap_tol", "rounds", "repair_scale",
        "seconds",
        # prior records (darrm.prior …to_dict)
        "mean", "means", "a", "b", "name", "p_lower", "T",
    }),
    # keys that are names of things: the paper's tables (γ families' names: see vocabulary())
    "names": frozenset({"teachers", "totals", "table3", "gnmax"}),
}


def vocabulary() -> frozenset[str]:
    """Every key the JSON output may hold: :data:`VOCABULARY_GROUPS` and the names of the γ families
    registered now (``darrm evaluate --json`` keys its curves by family; :mod:`darrm.families`)."""
    return frozenset().union(*VOCABULARY_GROUPS.values(), families.table_names())


#: :func:`vocabulary` when darrm was imported (the built-in families)
VOCABULARY: frozenset[str] = vocabulary()


def canonical_key(key: str) -> str:
    """The JSON name of a library record key (:data:`KEY_RENAMES`, then :data:`WORD_RENAMES`)."""
    if key in KEY_RENAMES:
        return KEY_RENAMES[key]
    return "_".join(WORD_RENAMES.get(w, w) for w in key.split("_"))


def canonical(obj: Any) -> Any:
    """``obj`` with every dict key renamed by :func:`canonical_key` (recursively; tuples become lists)."""
    if isinstance(obj, dict):
        return {canonical_key(str(k)): canonical(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [canonical(v) for v in obj]
    return obj


def keys(obj: Any) -> set[str]:
    """Every dict key anywhere in ``obj`` (for the vocabulary check)."""
    if isinstance(obj, dict):
        return set(obj).union(*(keys(v) for v in obj.values()))
    if isinstance(obj, list):
        return set().union(*(keys(v) for v in obj))
    return set()
