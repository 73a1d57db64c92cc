"""Benchmark: γ_opt for budget groups on one-group shards (darrm.models.weighted_shards), sparse full LP vs
constraint generation, in both γ forms.

Run:  .venv/bin/python benchmarks/bench_weighted_shards.py            (K = 11 + 15 + 7, both methods)
      .venv/bin/python benchmarks/bench_weighted_shards.py --paper    (K = 34 + 44 + 23, the full LP only:
                                                                       constraint generation per group
                                                                       passed 5 GiB there)

Each (form, method) runs in a fresh subprocess, so its peak RSS and CPU seconds are its own (CPU
seconds, not wall: the machine is shared).  Non-private teachers, Individualized PATE's per-query
budgets at Q = 100 (ε_q = 0.0261 / 0.0490 / 0.0706, δ_q = 5e-8), prior i.i.d. 0.9; the weighted form
uses w = 1, 2, 3.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

EPS = (0.02608406319450296, 0.04898598540603416, 0.07062067709011899)
DELTA = 5e-8


def one(sizes: list[int], weighted: bool, method: str) -> dict:
    import darrm

    params = darrm.WeightedShardParams(darrm.NonPrivate(), [(k, e, DELTA) for k, e in zip(sizes, EPS, strict=True)],
                                       (1.0, 2.0, 3.0) if weighted else None)
    t = time.process_time()
    table = darrm.solve(params, darrm.IIDPrior(0.9), options=darrm.SolveOptions(method=method))
    cpu = time.process_time() - t
    return {"sizes": sizes, "form": params.gamma_form, "method": method, "cpu_s": round(cpu, 2),
            "error": table.objective, "status": table.status, "gap": table.info.get("optimality_gap"),
            "rounds": table.info.get("rounds"), "lp_rows": table.info.get("lp_rows"),
            "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--child":
        print(json.dumps(one(json.loads(argv[1]), argv[2] == "weighted", argv[3])))
        return 0
    paper = "--paper" in argv
    sizes = [34, 44, 23] if paper else [11, 15, 7]
    methods = ["full"] if paper else ["full", "cutting-planes"]
    print(f"{'sizes':>14} {'form':>10} {'method':>15} {'CPU s':>8} {'peak MiB':>9} {'rounds':>6} {'LP rows':>8} "
          f"{'E[error]':>10} {'gap':>9} status")
    for form in ("per-group", "weighted"):
        for method in methods:
            out = subprocess.run([sys.executable, __file__, "--child", json.dumps(sizes), form, method],
                                 capture_output=True, text=True, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{'+'.join(map(str, r['sizes'])):>14} {r['form']:>10} {r['method']:>15} {r['cpu_s']:>8.2f} "
                  f"{r['peak_mib']:>9.1f} {r['rounds']:>6} {r['lp_rows']:>8} {r['error']:>10.6f} "
                  f"{r['gap']:>9.1e} {r['status']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
