"""Markdown tables next to the paper's numbers (Tables 1, 2, 5–10) and the accuracy-vs-m plot."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from darrm.accounting.paper import TEACHER_EPS
from darrm.experiments.png import pyplot, save_png
from darrm.plotting import fit_suptitle

__all__ = ["PAPER_ACCURACY", "PAPER_BUDGET", "PAPER_TEACHER_EPS", "SMOKE_TEST_NOTE", "accuracy_figure", "accuracy_plot",
           "markdown_report"]

#: the first line of a ``--quick`` run's tables and of its command-line summary
SMOKE_TEST_NOTE = ("SMOKE TEST (--quick): 1 teacher epoch, few queries and draws; it checks that every stage runs. "
                   "Its numbers are not results and are not comparable with the paper (no paper columns).")

#: Paper Tables 6 (m=1), 1 (m=3), 8 (m=5), 10 (m=7): {(dataset, m, Q): (GNMax, Sub, opt)} as (mean, std).
_ACC_ROWS = {
    1: {"mnist": [((0.54, 0.11), (0.68, 0.07), (0.74, 0.08)), ((0.51, 0.07), (0.67, 0.05), (0.66, 0.05)),
                  ((0.57, 0.03), (0.71, 0.03), (0.69, 0.04))],
        "fashion-mnist": [((0.56, 0.10), (0.92, 0.05), (0.89, 0.06)), ((0.52, 0.05), (0.89, 0.04), (0.92, 0.03)),
                          ((0.56, 0.04), (0.89, 0.04), (0.91, 0.04))]},
    3: {"mnist": [((0.63, 0.09), (0.76, 0.09), (0.79, 0.09)), ((0.66, 0.06), (0.75, 0.06), (0.79, 0.05)),
                  ((0.64, 0.04), (0.76, 0.04), (0.80, 0.04))],
        "fashion-mnist": [((0.65, 0.11), (0.90, 0.07), (0.96, 0.03)), ((0.59, 0.06), (0.94, 0.03), (0.96, 0.02)),
                          ((0.64, 0.04), (0.93, 0.02), (0.96, 0.02))]},
    5: {"mnist": [((0.73, 0.11), (0.76, 0.09), (0.84, 0.07)), ((0.75, 0.07), (0.82, 0.04), (0.83, 0.04)),
                  ((0.72, 0.04), (0.79, 0.05), (0.83, 0.03))],
        "fashion-mnist": [((0.72, 0.10), (0.96, 0.04), (0.97, 0.04)), ((0.72, 0.08), (0.96, 0.02), (0.97, 0.02)),
                          ((0.72, 0.06), (0.97, 0.01), (0.97, 0.01))]},
    7: {"mnist": [((0.79, 0.07), (0.80, 0.09), (0.85, 0.08)), ((0.80, 0.05), (0.82, 0.05), (0.85, 0.04)),
                  ((0.80, 0.04), (0.80, 0.04), (0.83, 0.03))],
        "fashion-mnist": [((0.79, 0.07), (0.95, 0.04), (0.96, 0.04)), ((0.79, 0.05), (0.96, 0.03), (0.97, 0.03)),
                          ((0.79, 0.03), (0.96, 0.02), (0.96, 0.02))]},
}
PAPER_ACCURACY: dict[tuple[str, int, int], dict[str, tuple[float, float]]] = {
    (ds, m, Q): dict(zip(("gnmax-paper", "darrm-sub", "darrm-opt"), row, strict=True))
    for m, by_ds in _ACC_ROWS.items() for ds, rows in by_ds.items() for Q, row in zip((20, 50, 100), rows, strict=True)
}
#: Paper Tables 5 (m=1), 2 (m=3), 7 (m=5), 9 (m=7): (ε_total, δ_total) per (dataset, m, Q).
_BUDGET = {
    1: {"mnist": [(1.704, 0.002), (2.837, 0.005), (4.202, 0.010)],
        "fashion-mnist": [(1.620, 0.002), (2.695, 0.005), (3.988, 0.010)]},
    3: {"mnist": [(5.352, 0.006), (9.901, 0.015), (15.044, 0.030)],
        "fashion-mnist": [(5.112, 0.006), (9.382, 0.015), (14.219, 0.030)]},
    5: {"mnist": [(8.920, 0.010), (18.428, 0.025), (28.926, 0.049)],
        "fashion-mnist": [(8.520, 0.010), (17.398, 0.025), (27.223, 0.049)]},
    7: {"mnist": [(12.488, 0.014), (28.392, 0.035), (45.683, 0.068)],
        "fashion-mnist": [(11.928, 0.014), (26.738, 0.035), (42.873, 0.068)]},
}
PAPER_BUDGET = {(ds, m, Q): v for m, by in _BUDGET.items() for ds, rows in by.items()
                for Q, v in zip((20, 50, 100), rows, strict=True)}
PAPER_TEACHER_EPS = TEACHER_EPS  # the paper's teacher ε, kept once in darrm.accounting.paper
_TABLE_NO = {1: ("6", "5"), 3: ("1", "2"), 5: ("8", "7"), 7: ("10", "9")}
_COLUMNS = ("gnmax-paper", "gnmax-tight", "darrm-sub", "darrm-opt", "majority-private-parallel",
            "majority-nonprivate")


def _ms(rec) -> str:
    return f"{rec['accuracy_mean']:.2f} ({rec['accuracy_std']:.2f})"


def _accuracy_table(by: dict, ds: str, m: int, Qs: list[int], paper_columns: bool = True) -> list[str]:
    """Accuracy per Q and method, ours / the paper's (mean (std) over draws; ours only without paper columns)."""
    title = f" — ours / paper Table {_TABLE_NO.get(m, ('–', '–'))[0]}" if paper_columns else ""
    lines = [f"### m = {m}: accuracy, mean (std) over draws{title}", "",
             "| Q | GNMax (paper σ) | GNMax (tight σ) | DaRRM γ_Sub | DaRRM γ_opt "
             "| majority of private teachers (parallel) | non-private majority |",
             "|---|---|---|---|---|---|---|"]
    for Q in Qs:
        paper = PAPER_ACCURACY.get((ds, m, Q), {}) if paper_columns else {}
        cells = []
        for meth in _COLUMNS:
            r = by.get((ds, meth, m, Q))
            cell = _ms(r) if r else "–"
            if meth in paper:
                cell += f" / {paper[meth][0]:.2f} ({paper[meth][1]:.2f})"
            cells.append(cell)
        lines.append(f"| {Q} | " + " | ".join(cells) + " |")
    return lines


def _privacy_table(by: dict, ds: str, m: int, Qs: list[int], paper_columns: bool = True) -> list[str]:
    """Per-query and total privacy per Q, ours / the paper's (the paper's column "–" without paper columns)."""
    title = f" — ours / paper Table {_TABLE_NO.get(m, ('–', '–'))[1]}" if paper_columns else ""
    lines = ["", f"### m = {m}: privacy{title}", "",
             "| Q | (ε_query, δ_query) | (ε_total, δ_total) Kairouz general | paper | "
             "ε_total optimal composition | GNMax tight σ: ε_total exact Gaussian | "
             "majority of private teachers: total |",
             "|---|---|---|---|---|---|---|"]
    for Q in Qs:
        r = by.get((ds, "darrm-opt", m, Q))
        g = by.get((ds, "gnmax-tight", m, Q))
        p = by.get((ds, "majority-private-parallel", m, Q))
        if not r:
            continue
        pb = PAPER_BUDGET.get((ds, m, Q)) if paper_columns else None
        lines.append(
            f"| {Q} | ({r['eps_query']:.4f}, {r['delta_query']:.4f}) | ({r['eps_total_paper']:.3f}, "
            f"{r['delta_total_paper']:.3f}) | " + (f"({pb[0]:.3f}, {pb[1]:.3f})" if pb else "–")
            + f" | {r['eps_total_optimal']:.3f} | "
            + (f"{g['eps_total_gaussian_pld']:.3f} (σ = {g['sigma']:.2f})" if g else "–")
            + " | " + (f"({p['epsilon_total']:.4f}, {p['delta_total']:g})" if p else "–") + " |")
    return lines + [""]


def markdown_report(records: list[dict], run_info: dict | None = None) -> str:
    """Tables per dataset and m: ours vs the paper (accuracy, then per-query/total privacy).

    Args:
        records: the two-class study's records (``results.json``).
        run_info: ``teachers.json``'s ``run`` (configuration, device, times, data); its
            configuration's ``smoke_test`` puts the smoke-test note first and drops the paper columns.

    Returns:
        The Markdown text of ``tables.md``.

    Raises:
        KeyError: a record lacks a field the study writes.
    """
    lines: list[str] = []
    smoke = bool(run_info and run_info.get("config", {}).get("smoke_test"))
    if smoke:
        lines += [SMOKE_TEST_NOTE, ""]
    by = {(r["dataset"], r["method"], r["m"], r["Q"]): r for r in records}
    for ds in sorted({r["dataset"] for r in records}):
        lines += [f"## {ds}", ""]
        teach = by.get((ds, "teachers-dpsgd", None, None))
        nonp = by.get((ds, "teachers-nonprivate", None, None))
        if teach:
            paper_eps = "" if smoke else f" (paper: {PAPER_TEACHER_EPS[ds]})"
            lines += [f"Private teachers (DP-SGD): ε = {teach['eps']:.4f} at Δ = {teach['delta']:g}"
                      f"{paper_eps}; mean (std) test accuracy {_ms(teach)}."]
        if nonp:
            lines += [f"Non-private teachers: mean (std) test accuracy {_ms(nonp)}."]
        lines.append("")
        ms = sorted({r["m"] for r in records if r["dataset"] == ds and r["m"] is not None})
        Qs = sorted({r["Q"] for r in records if r["dataset"] == ds and r["Q"] is not None})
        for m in ms:
            lines += _accuracy_table(by, ds, m, Qs, not smoke) + _privacy_table(by, ds, m, Qs, not smoke)
    if run_info:
        lines += ["## Run", "", f"- device: {run_info.get('device')} ({run_info.get('device_name')}), "
                  f"torch threads {run_info.get('torch_threads')}",
                  f"- teachers stage: {run_info.get('seconds_teachers_stage', 0):.1f} s "
                  f"(cached teachers are reloaded), total {run_info.get('seconds_total', 0):.1f} s", ""]
    return "\n".join(lines) + "\n"


_MARKERS = ("o", "s", "^", "v", "D", "P", "X")



def _draws(records: list[dict]) -> str:
    n = sorted({int(r["draws"]) for r in records if r.get("Q") is not None and r.get("draws") is not None})
    return "/".join(str(x) for x in n) if n else "the"


def accuracy_figure(records: list[dict]):
    """The figure of :func:`accuracy_plot`, returned open (for inspection).

    Args:
        records: the two-class study's records (``results.json``).

    Returns:
        The matplotlib figure.

    Raises:
        MissingDependencyError: matplotlib is not installed.
        KeyError: a record lacks a field the study writes.
    """
    plt = pyplot("the accuracy plot")
    keys = sorted({(r["dataset"], r["Q"]) for r in records if r["Q"] is not None})
    fig, axes = plt.subplots(1, len(keys), figsize=(4.6 * max(len(keys), 1.5), 4.4), squeeze=False,
                             layout="constrained")
    handles: dict[str, object] = {}
    for ax, (ds, Q) in zip(axes[0], keys, strict=True):
        ms = sorted({r["m"] for r in records if r["dataset"] == ds and r["Q"] == Q})
        spacing = min(np.diff(ms)) if len(ms) > 1 else 1.0
        width = 0.6 * spacing / len(_COLUMNS)  # each method its own x offset: no marker hides another
        for i, meth in enumerate(_COLUMNS):
            rs = sorted((r for r in records if r["dataset"] == ds and r["Q"] == Q and r["method"] == meth),
                        key=lambda r: r["m"])
            if rs:
                offset = (i - (len(_COLUMNS) - 1) / 2) * width
                h = ax.errorbar([r["m"] + offset for r in rs], [r["accuracy_mean"] for r in rs],
                                yerr=[r["accuracy_std"] for r in rs], marker=_MARKERS[i % len(_MARKERS)],
                                ms=5, capsize=3, lw=1.2, label=meth)
                handles.setdefault(meth, h)
        ax.set_xticks(ms)
        ax.set_xlim(ms[0] - 0.5 * spacing, ms[-1] + 0.5 * spacing)
        ax.set_title(f"{ds}, Q = {Q}")
        ax.set_xlabel("privacy allowance m")
        ax.set_ylabel("accuracy of released labels")
        ax.set_ylim(0.4, 1.02)
        ax.grid(alpha=0.3, axis="y")
    fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    fit_suptitle(fig, "Accuracy of the released labels vs the privacy allowance m (mean; error bars ±1 s.d. "
                      f"over {_draws(records)} draws of Q test queries; methods offset horizontally at each m)",
                 fontsize=10)
    return fig


def accuracy_plot(records: list[dict], path: Path) -> None:
    """Accuracy vs m, one panel per (dataset, Q), one series per method with its own marker and
    x offset; error bars ±1 standard deviation over the draws (stated in the figure's title).

    Args:
        records: the two-class study's records (``results.json``).
        path: the PNG file (its folder is created; written atomically).

    Raises:
        MissingDependencyError: matplotlib is not installed.
        OSError: ``path`` cannot be written.
    """
    fig = accuracy_figure(records)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    save_png(fig, path, dpi=120)
