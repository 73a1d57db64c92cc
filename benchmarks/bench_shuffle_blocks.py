"""Benchmark for issue 28 (speed at large n): the count-sum ε(δ) searches with blocks of S
(``s_blocks``) and the binding-candidate lower search, against an older tree, same run.

    python benchmarks/bench_shuffle_blocks.py --old-ref main [--ns 1e6,1e7,1e8]

The old tree (``git archive`` of ``--old-ref`` into a temporary directory, laid out as the
installed package) and the installed (editable) tree each run every row in a fresh subprocess, alternating
old and new row by row so both see the same load.  Rows: binary RR, 10-RR and 100-RR at each
ε0 of ``--eps0s``, upper (``decomposition.eps_bound``, the optimal decomposition) and lower
(``decomposition.lower_eps_bound``), δ = 0.01/n (Wang et al.'s Table 5).  Times: process CPU
seconds of the one call (the machine is shared, so CPU time is the comparable number) and wall
seconds.  "rel. diff": new ε / old ε − 1.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _worker(args: argparse.Namespace) -> None:
    from darrm.accounting.shuffle import RandomizedResponse, decomposition

    r = RandomizedResponse(args.eps0, args.k)
    fn = decomposition.eps_bound if args.kind == "upper" else decomposition.lower_eps_bound
    c, w = time.process_time(), time.perf_counter()
    eps = fn(r, args.n, args.delta).eps
    print(json.dumps({"eps": eps, "cpu": time.process_time() - c, "wall": time.perf_counter() - w}))


def _old_tree(ref: str, tmp: Path) -> Path:
    """``ref``'s tree laid out as the installed package (darrm/, darrm/accounting, ...)."""
    src = tmp / "src"
    src.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    pkg = tmp / "pkg"
    pkg.mkdir()
    subprocess.run(["cp", "-r", str(src / "darrm"), str(pkg / "darrm")], check=True)
    for sub in ("accounting", "experiments"):
        (pkg / "darrm" / sub).symlink_to(src / sub)
    return pkg


def _run(pythonpath: Path | None, n: int, k: int, eps0: float, kind: str, delta: float) -> dict:
    """One row in a fresh interpreter: the tree at ``pythonpath``, or the installed one (None)."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--n", str(n), "--k", str(k),
           "--eps0", repr(eps0), "--kind", kind, "--delta", repr(delta)]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old-ref", default="main", help="git ref of the old tree (default: main)")
    ap.add_argument("--ns", default="1e6,1e7,1e8", help="comma-separated n (default: 1e6,1e7,1e8)")
    ap.add_argument("--ks", default="2,10,100", help="comma-separated k of k-RR (default: 2,10,100)")
    ap.add_argument("--eps0s", default="0.25,1,4,8", help="comma-separated ε0 (default: 0.25,1,4,8)")
    ap.add_argument("--kinds", default="upper,lower", help="upper and/or lower (default: both)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--k", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--eps0", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--kind", help=argparse.SUPPRESS)
    ap.add_argument("--delta", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        old = _old_tree(args.old_ref, Path(tmp))
        print("| n | randomizer | ε0 | bound | old ε | new ε | rel. diff | old CPU s | new CPU s | old/new CPU "
              "| old wall s | new wall s |\n|---|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
        for n in (int(float(x)) for x in args.ns.split(",")):
            delta = 0.01 / n
            for k in (int(x) for x in args.ks.split(",")):
                for eps0 in (float(x) for x in args.eps0s.split(",")):
                    for kind in args.kinds.split(","):
                        o = _run(old, n, k, eps0, kind, delta)
                        w = _run(None, n, k, eps0, kind, delta)
                        print(f"| {n:.0e} | {k}-RR | {eps0:g} | {kind} | {o['eps']:.8g} | {w['eps']:.8g} | "
                              f"{w['eps'] / o['eps'] - 1 if o['eps'] else 0.0:+.1e} | {o['cpu']:.2f} | "
                              f"{w['cpu']:.2f} | {o['cpu'] / max(w['cpu'], 1e-9):.1f} | {o['wall']:.2f} | "
                              f"{w['wall']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
