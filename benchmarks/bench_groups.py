"""Benchmark: γ_opt(L) for grouped members (darrm.models.groups) against every member at the worst budget.

Run:  .venv/bin/python benchmarks/bench_groups.py            (the small settings)
      .venv/bin/python benchmarks/bench_groups.py --large    (issue 26's targets: G = 2 at K = 31, G = 3 at K = 21)
      add --per-group to solve γ(l_1, …, l_G) (GroupParams(gamma_form="per-group")) instead of γ(L)

Each setting runs in a fresh subprocess, so its peak RSS is its own. For each setting it reports
the grouped solve (constraint generation + certificate over the product of the groups' corner
multisets), one certificate pass, and the shared-data γ_opt with every member at the worst
(ε_g, Δ_g), solved in the same run. The first setting is issue 26's reference.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

SETTINGS = [
    # (groups, target_eps, target_delta)
    ([(5, 0.1, 1e-5), (6, 0.3, 1e-5)], 0.5, 1e-4),
    ([(3, 0.1, 1e-5), (4, 0.3, 1e-5)], 0.5, 1e-4),
    ([(6, 0.1, 1e-5), (5, 0.3, 1e-5)], 0.5, 1e-4),
    ([(3, 0.1, 1e-5), (3, 0.2, 1e-5), (3, 0.3, 1e-5)], 0.5, 1e-4),
    ([(7, 0.1, 0.0), (6, 0.3, 0.0)], 0.5, 0.0),
]

#: issue 26's benchmark targets (Δ > 0): products of 3.9·10¹⁰ and 4.0·10¹⁰ configurations
LARGE = [
    ([(16, 0.1, 1e-5), (15, 0.3, 1e-5)], 0.5, 1e-4),
    ([(7, 0.1, 1e-5), (7, 0.2, 1e-5), (7, 0.3, 1e-5)], 0.5, 1e-4),
]


def one(groups, target_eps: float, target_delta: float, form: str = "total") -> dict:
    import darrm
    from darrm.models.groups.certificate import certify_groups

    prior = darrm.IIDPrior(0.75)
    params = darrm.GroupParams(tuple(tuple(g) for g in groups), target_eps, target_delta, form)
    t0 = time.perf_counter()
    table = darrm.solve(params, prior, log=lambda line: print(f"{time.perf_counter() - t0:8.1f} s  {line}",
                                                              file=sys.stderr, flush=True))
    t1 = time.perf_counter()
    certify_groups(table.gamma, params)
    t2 = time.perf_counter()
    eps_w = max(g[1] for g in groups)
    delta_w = max(g[2] for g in groups)
    worst = darrm.PrivacyParams(K=params.K, m=target_eps / eps_w, eps=eps_w, member_delta=delta_w, delta=target_delta)
    w = darrm.solve(worst, prior)
    t3 = time.perf_counter()
    return {"groups": groups, "gamma_form": form, "K": params.K, "configurations": params.configurations,
            "error_groups": round(float(table.objective or 0.0), 5),
            "error_all_at_worst": round(float(w.objective or 0.0), 5),
            "status": table.status, "gap": table.info["optimality_gap"], "rounds": table.info["rounds"],
            "method": table.info["method"], "seconds_solve": round(t1 - t0, 2), "seconds_certify": round(t2 - t1, 2),
            "seconds_worst_solve": round(t3 - t2, 2),
            "cpu_seconds": round(time.process_time(), 1),
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def main() -> None:
    form = "per-group" if "--per-group" in sys.argv[1:] else "total"
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        groups, eps, delta = json.loads(sys.argv[2])
        print(json.dumps(one(groups, eps, delta, form)), flush=True)
        return
    for s in LARGE if "--large" in sys.argv[1:] else SETTINGS:
        extra = ["--per-group"] if form == "per-group" else []
        r = subprocess.run([sys.executable, __file__, "--one", json.dumps(s), *extra], stdout=subprocess.PIPE,
                           text=True, check=True)
        print(r.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
