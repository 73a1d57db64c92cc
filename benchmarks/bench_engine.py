"""Benchmark: the constraint-generation solves of every member model, a git revision against this tree.

Run:  .venv/bin/python benchmarks/bench_engine.py [--base main] [--problems k101 pure1001 ...] [--reps 1]

The same problems are solved by the code at ``--base`` (checked out with ``git worktree add --detach``
into a temporary folder, or an existing folder given as ``--base-dir``) and by this working tree, in the
same run, each solve in a fresh subprocess whose ``PYTHONPATH`` puts its tree first; the two paths
alternate, so both see the same load.  For each solve it prints the objective (repr, all 17 digits), a
SHA-256 of the γ array's float64 bytes, the rounds, the stop and the wall seconds of the solve alone
(after a warm-up solve of the same model, so imports and caches are not timed).  "same" says whether
objective, γ hash and rounds agree bit for bit.

Problems (prior i.i.d. 0.75 unless said):
  k101          shared data, K = 101, m = 5, ε = 0.1, Δ = 1e-5 (cutting planes; the Δ > 0 target)
  k61           the same at K = 61 (a quicker Δ > 0 variant)
  pure1001      shared data, K = 1001, m = 10, ε = 0.1, Δ = 0 (cutting planes; the pure-DP target)
  groups        grouped members, 8×(0.1, 1e-5) + 7×(0.3, 1e-5), target (0.5, 1e-4), γ(L)
  groups-per    grouped members, 7×(0.1, 1e-5) + 6×(0.3, 1e-5), γ(l_1, l_2) (per-group cuts)
  shard-groups  record groups on shards, K = 101, (0.3, 1e-4)-DP members, (1, 0.1) (3, 0.3), Δ = 1e-4
  disjoint      disjoint members, K = 2001, (1, 1e-5)-DP, target (0.02, 1e-6): ~200 rounds
  weighted      weighted shards 11 + 15 + 7, non-private, weights 1, 2, 3, prior 0.9 (constraint generation)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ("k101", "k61", "pure1001", "groups", "groups-per", "shard-groups", "disjoint", "weighted")
DEFAULT = ("k101", "pure1001", "groups", "groups-per", "shard-groups", "disjoint", "weighted")


def _problem(name: str):
    """(params, prior, options, warm-up params) of a problem."""
    import darrm

    cp = darrm.SolveOptions(method="cutting-planes", accept_gap=True)
    prior = darrm.IIDPrior(0.75)
    if name in ("k101", "k61", "pure1001"):
        K, m, delta = {"k101": (101, 5, 1e-5), "k61": (61, 5, 1e-5), "pure1001": (1001, 10, 0.0)}[name]
        return (darrm.PrivacyParams(K, m, 0.1, delta), prior, cp, darrm.PrivacyParams(5, 3, 0.1, delta))
    if name == "groups":
        return (darrm.GroupParams(((8, 0.1, 1e-5), (7, 0.3, 1e-5)), 0.5, 1e-4), prior, cp,
                darrm.GroupParams(((2, 0.1, 1e-5), (1, 0.3, 1e-5)), 0.5, 1e-4))
    if name == "groups-per":
        return (darrm.GroupParams(((7, 0.1, 1e-5), (6, 0.3, 1e-5)), 0.5, 1e-4, "per-group"), prior, cp,
                darrm.GroupParams(((2, 0.1, 1e-5), (1, 0.3, 1e-5)), 0.5, 1e-4, "per-group"))
    if name == "shard-groups":
        return (darrm.ShardGroupParams(101, darrm.ApproxDP(0.3, 1e-4), [(1, 0.1, 1e-4), (3, 0.3, 1e-4)]),
                prior, cp, darrm.ShardGroupParams(5, darrm.NonPrivate(), [(1, 0.5, 1e-5), (2, 1.0, 1e-5)]))
    if name == "disjoint":
        return (darrm.DisjointParams(2001, darrm.ApproxDP(1.0, 1e-5), 0.02, 1e-6), prior, cp,
                darrm.DisjointParams(11, darrm.ApproxDP(1.0, 1e-5), 0.3, 1e-6))
    if name == "weighted":
        eps = (0.02608406319450296, 0.04898598540603416, 0.07062067709011899)
        return (darrm.WeightedShardParams(darrm.NonPrivate(), [(k, e, 5e-8) for k, e in zip((11, 15, 7), eps,
                                                                                             strict=True)],
                                          (1.0, 2.0, 3.0)), darrm.IIDPrior(0.9), cp,
                darrm.WeightedShardParams(darrm.NonPrivate(), [(1, 0.05, 5e-8), (2, 0.07, 5e-8)], (1.0, 2.0)))
    raise SystemExit(f"unknown problem {name!r}")


def child(name: str) -> dict:
    import numpy as np

    import darrm

    params, prior, options, warm = _problem(name)
    darrm.solve(warm, prior, options=options, progress=False)
    t0 = time.perf_counter()
    table = darrm.solve(params, prior, options=options, progress=False)
    seconds = time.perf_counter() - t0
    g = np.ascontiguousarray(np.asarray(table.gamma, dtype=np.float64))
    return {"problem": name, "darrm": str(Path(darrm.__file__).parent.parent), "seconds": round(seconds, 2),
            "objective": repr(float(table.objective)), "gamma_sha256": hashlib.sha256(g.tobytes()).hexdigest()[:16],
            "rounds": table.info.get("rounds"), "stop": table.info.get("stop"), "status": table.status,
            "gap": table.info.get("optimality_gap")}


def run_one(name: str, tree: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True, env=env,
                         cwd=tempfile.gettempdir(), check=False)
    if out.returncode:
        raise SystemExit(f"{name} at {tree} failed:\n{out.stderr[-3000:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if Path(r["darrm"]).resolve() != tree.resolve():
        raise SystemExit(f"{name}: imported darrm from {r['darrm']}, not {tree}")
    return r


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        print(json.dumps(child(argv[1])), flush=True)
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="main", help="git revision to compare against")
    ap.add_argument("--base-dir", type=Path, help="an existing checkout of the base (skips the worktree)")
    ap.add_argument("--problems", nargs="*", default=list(DEFAULT), choices=PROBLEMS)
    ap.add_argument("--reps", type=int, default=1, help="solves per (problem, path), alternating")
    args = ap.parse_args(argv)
    made = args.base_dir is None
    base = args.base_dir or Path(tempfile.mkdtemp(prefix="bench-engine-")) / "base"
    if made:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.base],
                       check=True, capture_output=True)
    try:
        rev = subprocess.run(["git", "-C", str(base), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        print(f"# base {args.base} = {rev} ({base}); new = {ROOT}; load {os.getloadavg()}", flush=True)
        for name in args.problems:
            runs: dict[str, list[dict]] = {"base": [], "new": []}
            for _ in range(args.reps):
                for path, tree in (("base", base), ("new", ROOT)):
                    runs[path].append(run_one(name, tree))
            b, n = runs["base"][0], runs["new"][0]
            keys = ("objective", "gamma_sha256", "rounds")
            same = all(r[k] == b[k] for r in runs["base"] + runs["new"] for k in keys)
            tb = sorted(r["seconds"] for r in runs["base"])
            tn = sorted(r["seconds"] for r in runs["new"])
            print(json.dumps({"problem": name, "same": same, "objective": n["objective"], "gamma": n["gamma_sha256"],
                              "rounds": n["rounds"], "stop": n["stop"], "status": n["status"], "gap": n["gap"],
                              "base_s": tb, "new_s": tn, "new/base (medians)": round(tn[len(tn) // 2]
                                                                                   / tb[len(tb) // 2], 3),
                              "mismatch": None if same else {"base": b, "new": n}}), flush=True)
        print(f"# load {os.getloadavg()}", flush=True)
    finally:
        if made:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
