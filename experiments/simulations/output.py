"""Write a computed figure as CSV and JSON (numbers only; plots are in :mod:`.plots`).

Files for figure ``key`` in ``out_dir``:

* ``{key}.json`` — settings, per panel and curve: γ, certificate, LP objectives, solver
  facts and expected errors (``method`` says exact / iid-exact / product-mc);
* ``{key}_gammas.csv`` — panel, curve, l, γ(l);
* ``{key}_error_curves.csv`` — panel, p, one column per curve: exact E(DaRRM_γ) with
  p_1 = … = p_K = p;
* ``{key}_expected_errors.csv`` — panel, curve, actual, method, value, se, samples;
* ``{key}.md`` — the same numbers as a markdown table (:mod:`.summary`).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from darrm.atomic import atomic_write_bytes

from .compute import FigureResult, PanelResult
from .summary import figure_markdown


def _write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def _csv(rows: list[list[object]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for r in rows:
        w.writerow([repr(float(x)) if isinstance(x, float) else x for x in r])
    return buf.getvalue()


def panel_to_dict(pr: PanelResult) -> dict:
    return {
        "label": pr.label,
        "params": pr.params.to_dict(),
        "curves": [
            {
                "name": c.name, "family": c.family, "gamma": [float(x) for x in c.gamma],
                "certified": bool(c.certified), "violation": float(c.violation),
                "objective_by_prior_mean": {str(mu): float(v) for mu, v in c.objectives.items()},
                "seconds": c.seconds, "info": c.info,
            }
            for c in pr.curves
        ],
        "expected_errors": [
            {
                "curve": e.curve, "actual": e.actual, "method": e.method,
                "value": e.value, "se": e.se, "samples": e.samples,
            }
            for e in pr.expected
        ],
    }


def figure_to_dict(res: FigureResult) -> dict:
    cfg = res.config
    return {
        "figure": cfg.key,
        "title": cfg.title,
        "error": "E(DaRRM_γ) = |Pr[A(D)=1] − Pr[g(S)=1]| (Def. 2.4), K draws per sample",
        "actuals": [{"name": a.name, "low": a.low, "high": a.high} for a in cfg.actuals],
        "mc_samples": cfg.mc_samples,
        "seed": cfg.seed,
        "notes": list(cfg.notes),
        "seconds": res.seconds,
        "panels": [panel_to_dict(p) for p in res.panels],
    }


def write_figure_data(res: FigureResult, out_dir: str | Path) -> list[Path]:
    """Write the JSON and CSV files of a figure; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    key = res.config.key
    paths = [out / f"{key}.json", out / f"{key}_gammas.csv", out / f"{key}_error_curves.csv",
             out / f"{key}_expected_errors.csv", out / f"{key}.md"]
    _write_text(paths[0], json.dumps(figure_to_dict(res), indent=1, allow_nan=False) + "\n")
    g_rows: list[list[object]] = [["panel", "curve", "l", "gamma"]]
    e_rows: list[list[object]] = []
    x_rows: list[list[object]] = [["panel", "curve", "actual", "method", "value", "se", "samples"]]
    for pr in res.panels:
        for c in pr.curves:
            g_rows += [[pr.label, c.name, l, float(v)] for l, v in enumerate(c.gamma)]
        names = [c.name for c in pr.curves]
        if not e_rows:
            e_rows.append(["panel", "p", *(f"E_{n}" for n in names)])
        e_rows += [[pr.label, float(p)] + [float(pr.error_curves[n][i]) for n in names] for i, p in enumerate(pr.p)]
        x_rows += [[pr.label, e.curve, e.actual, e.method, float(e.value), float(e.se), e.samples] for e in pr.expected]
    _write_text(paths[1], _csv(g_rows))
    _write_text(paths[2], _csv(e_rows))
    _write_text(paths[3], _csv(x_rows))
    _write_text(paths[4], figure_markdown(res))
    return paths
