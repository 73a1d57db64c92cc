"""Shared by the solve benchmarks that run each solve in a fresh subprocess (bench_warm_start,
bench_cold_solve): the problem's command-line options and the CPU seconds of the
finished children (``resource.getrusage(RUSAGE_CHILDREN)``: user + system of every waited-for
subprocess and its own waited-for children, so a solve's sweep workers are included)."""

from __future__ import annotations

import argparse
import resource


def add_problem_args(ap: argparse.ArgumentParser) -> None:
    """--K (several), --m, --eps, --delta (m = 5, ε = 0.1, Δ = 1e-5 by default) and the hidden --child."""
    ap.add_argument("--K", type=int, nargs="+", default=[61, 81, 101])
    ap.add_argument("--m", type=float, default=5.0)
    ap.add_argument("--eps", type=float, default=0.1)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)


def cpu_children() -> float:
    """CPU seconds (user + system) of this process's finished children so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
