"""Benchmark for issue 28: shuffled binary RR above n = 20000 (``binary_rr_exact``), upper and
lower ε(δ), their ratio and CPU seconds, old tree against new, same run.

    PYTHONPATH=. python benchmarks/bench_shuffle_binary_blocks.py [--old-ref main] [--ns 1e7,1e8]

δ = 0.01/n (Wang et al.'s Table 5).  The old tree (``git archive`` of ``--old-ref``, laid out as
the installed package by ``bench_shuffle_blocks._old_tree``) and this tree each run every call in
a fresh interpreter, old and new alternating row by row so both see the same load; CPU seconds
are the process CPU time of the one ``exact_eps`` call.  "best upper / best lower" also takes
the blanket (``decomposition.eps_bound``) and the fixed datasets
(``decomposition.lower_eps_bound``) into account, the previous best bounds above n = 20000.
``--no-old`` skips the old tree.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _worker(args: argparse.Namespace) -> None:
    from darrm.accounting.shuffle import RandomizedResponse, binary_rr_exact, decomposition

    out = {}
    for kind in ("upper", "lower"):
        c = time.process_time()
        out[kind] = binary_rr_exact.exact_eps(args.eps0, args.n, args.delta, kind)
        out[kind + "_cpu"] = time.process_time() - c
    if args.peers:
        rr = RandomizedResponse(args.eps0, 2)
        out["blanket"] = decomposition.eps_bound(rr, args.n, args.delta).eps
        out["fixed"] = decomposition.lower_eps_bound(rr, args.n, args.delta).eps
    print(json.dumps(out))


def _run(pythonpath: Path | None, n: int, eps0: float, delta: float, peers: bool) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    env.pop("PYTHONPATH", None)
    env["PYTHONPATH"] = str(pythonpath if pythonpath is not None else HERE.parent)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--n", str(n), "--eps0", repr(eps0),
           "--delta", repr(delta)] + (["--peers"] if peers else [])
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True, cwd=tempfile.gettempdir())
    return json.loads(out.stdout.strip().splitlines()[-1])


def _old_tree(ref: str, tmp: Path) -> Path:
    spec = importlib.util.spec_from_file_location("bench_shuffle_blocks", HERE / "bench_shuffle_blocks.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod._old_tree(ref, tmp)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", default="1e7,1e8", help="comma-separated n (default: 1e7,1e8)")
    ap.add_argument("--eps0s", default="0.25,1,4,8", help="comma-separated ε0 (default: 0.25,1,4,8)")
    ap.add_argument("--old-ref", default="main", help="git ref of the old tree (default: main)")
    ap.add_argument("--no-old", action="store_true", help="run this tree only")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--peers", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--eps0", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--delta", type=float, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        old = None if args.no_old else _old_tree(args.old_ref, Path(tmp))
        print("| n | ε0 | old upper ε | old lower ε | old upper/lower | old CPU s (up, low) | new upper ε "
              "| new lower ε | new upper/lower | new CPU s (up, low) | best upper / best lower |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|", flush=True)
        for n in (int(float(x)) for x in args.ns.split(",")):
            delta = 0.01 / n
            for eps0 in (float(x) for x in args.eps0s.split(",")):
                o = _run(old, n, eps0, delta, False) if old is not None else None
                w = _run(None, n, eps0, delta, True)
                best = min(w["upper"], w["blanket"]) / max(w["lower"], w["fixed"])
                old_cols = (f"{o['upper']:.8g} | {o['lower']:.8g} | {o['upper'] / o['lower']:.5f} | "
                            f"{o['upper_cpu']:.2f}, {o['lower_cpu']:.2f}") if o else "| | |"
                print(f"| {n:.0e} | {eps0:g} | {old_cols} | {w['upper']:.8g} | {w['lower']:.8g} | "
                      f"{w['upper'] / w['lower']:.5f} | {w['upper_cpu']:.2f}, {w['lower_cpu']:.2f} | {best:.5f} |",
                      flush=True)


if __name__ == "__main__":
    main()
