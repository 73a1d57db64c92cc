"""Regenerate the simulation figures: compute, then write numbers and plots."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from darrm.atomic import atomic_write_bytes
from darrm.errors import ParameterError
from darrm.paths import check_output_dir
from darrm.validation import comma_list

from .compute import compute_figure
from .figures import FIGURES
from .output import _csv, write_figure_data
from .plots import write_figure_plots
from .table3 import table3, table3_dicts, table3_markdown


def parse_figures(spec: str | Iterable[str] | None) -> tuple[str, ...]:
    """"2,6,7" → ("2", "6", "7"); None → all, in order; unknown names raise ParameterError."""
    if spec is None:
        return tuple(FIGURES)
    items = list(comma_list("figures", spec, str, "figure names") if isinstance(spec, str)
                 else (s.strip() for s in spec))
    items = [s.removeprefix("figure").removeprefix("fig") for s in items if s]
    bad = [s for s in items if s not in FIGURES]
    if bad or not items:
        raise ParameterError("figures", f"choose from {','.join(FIGURES)}, got {spec!r}")
    return tuple(dict.fromkeys(items))


def write_table3(out_dir: Path) -> list[Path]:
    rows = table3()
    paths = [out_dir / "table3.json", out_dir / "table3.csv", out_dir / "table3.md"]
    atomic_write_bytes(paths[0], (json.dumps(table3_dicts(rows), indent=1) + "\n").encode())
    cols = ["M", "m", "tau", "lam", "eps_total", "delta", "active_term", "p_const"]
    atomic_write_bytes(paths[1], _csv([cols] + [[getattr(r, c) for c in cols] for r in rows]).encode())
    atomic_write_bytes(paths[2], (table3_markdown(rows) + "\n").encode())
    return paths


def run_all(out_dir: str | Path, figures: str | Iterable[str] | None = None, quick: bool = False,
            log: Callable[[str], None] | None = None) -> dict[str, list[str]]:
    """Compute and write the chosen figures (default all) to ``out_dir``.

    Returns {figure key: [written paths]} and also writes it to ``out_dir/index.json``.
    """
    keys = parse_figures(figures)
    out = check_output_dir("out", out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, list[str]] = {}
    for k in keys:
        t0 = time.perf_counter()
        res = compute_figure(FIGURES[k](quick))
        paths = write_figure_data(res, out) + write_figure_plots(res, out)
        if k == "6":
            paths += write_table3(out)
        written[res.config.key] = [str(p) for p in paths]
        if log:
            log(f"{res.config.key}: {len(res.panels)} panels in {time.perf_counter() - t0:.1f} s")
    atomic_write_bytes(out / "index.json", (json.dumps({"quick": quick, "files": written}, indent=1) + "\n").encode())
    return written
