"""The student table (markdown) and the plot of student accuracy against total ε (PATE end to end)."""

from __future__ import annotations

from pathlib import Path

from darrm.experiments.png import pyplot, save_png
from darrm.plotting import fit_suptitle

__all__ = ["student_figure", "student_plot", "student_table"]

_ORDER = ("gnmax-paper", "gnmax-tight", "gnmax-equal-total", "darrm-sub", "darrm-opt", "majority-private-parallel",
          "majority-nonprivate")
_MARKERS = ("o", "s", "^", "v", "D", "P", "X")


def _eps(r: dict) -> str:
    return "∞ (no DP)" if r["epsilon_total"] is None else f"{r['epsilon_total']:.3g}"


def student_table(records: list[dict]) -> str:
    """Markdown: per dataset and m, one row per (Q, method): label accuracy, student accuracy (mean (std)
    over draws), the valid (ε_total, δ_total) and, for DaRRM, the generic fresh-member bound.

    Args:
        records: the study's records (``results.json``) with student fields.

    Returns:
        The Markdown text of ``students.md``.

    Raises:
        KeyError: a record lacks a field the study writes.
    """
    rows = [r for r in records if r.get("student_accuracy_mean") is not None]
    lines: list[str] = []
    for ds in sorted({r["dataset"] for r in rows}):
        for m in sorted({r["m"] for r in rows if r["dataset"] == ds}):
            lines += [f"### {ds}, m = {m}: student accuracy on the held-out half", "",
                      "| Q | method | label accuracy | student accuracy | ε_total (valid) | δ_total "
                      "| ε_total if members were fresh (generic bound) |", "|---|---|---|---|---|---|---|"]
            cell = sorted((r for r in rows if r["dataset"] == ds and r["m"] == m),
                          key=lambda r: (r["Q"], _ORDER.index(r["method"]) if r["method"] in _ORDER else 99))
            for r in cell:
                fresh = r.get("epsilon_total_fresh_members")
                lines.append(
                    f"| {r['Q']} | {r['method']} | {r['accuracy_mean']:.3f} ({r['accuracy_std']:.3f}) | "
                    f"{r['student_accuracy_mean']:.3f} ({r['student_accuracy_std']:.3f}) | {_eps(r)} | "
                    f"{'–' if r['delta_total'] is None else format(r['delta_total'], 'g')} | "
                    f"{'–' if fresh is None else format(fresh, '.3g')} |")
            lines.append("")
    accountants = sorted({r["accountant"] for r in rows})
    if accountants:
        lines += ["Accountants (valid totals):", ""] + [f"- {a}" for a in accountants] + [""]
    return "\n".join(lines)


def student_figure(records: list[dict]):
    """Student accuracy against the valid total ε (log scale), one panel per (dataset, m), a series
    per method over Q; DaRRM's generic fresh-member ε as hollow markers (not valid for fixed teachers).

    Args:
        records: the study's records (``results.json``) with student fields.

    Returns:
        The matplotlib figure.

    Raises:
        MissingDependencyError: matplotlib is not installed.
        KeyError: a record lacks a field the study writes.
    """
    plt = pyplot("the student plot")
    rows = [r for r in records if r.get("student_accuracy_mean") is not None]
    keys = sorted({(r["dataset"], r["m"]) for r in rows})
    fig, axes = plt.subplots(1, max(len(keys), 1), figsize=(5.4 * max(len(keys), 1), 4.6), squeeze=False,
                             layout="constrained")
    finite = [r["epsilon_total"] for r in rows if r["epsilon_total"] is not None]
    finite += [r["epsilon_total_fresh_members"] for r in rows if r.get("epsilon_total_fresh_members") is not None]
    right = 2.0 * max(finite) if finite else 10.0
    for ax, (ds, m) in zip(axes[0], keys, strict=True):
        for i, meth in enumerate(_ORDER):
            rs = sorted((r for r in rows if (r["dataset"], r["m"], r["method"]) == (ds, m, meth)), key=lambda r: r["Q"])
            if not rs:
                continue
            x = [right if r["epsilon_total"] is None else r["epsilon_total"] for r in rs]
            h = ax.errorbar(x, [r["student_accuracy_mean"] for r in rs], yerr=[r["student_accuracy_std"] for r in rs],
                            marker=_MARKERS[i], ms=5, capsize=3, lw=1.0, label=meth)
            fresh = [(r["epsilon_total_fresh_members"], r["student_accuracy_mean"]) for r in rs
                     if r.get("epsilon_total_fresh_members") is not None]
            if fresh:
                ax.plot(*zip(*fresh, strict=True), ls=":", marker=_MARKERS[i], mfc="none",
                        color=h.lines[0].get_color(), label=f"{meth} at generic fresh-member ε (not valid here)")
            for r, xi in zip(rs, x, strict=True):
                ax.annotate(f"Q={r['Q']}", (xi, r["student_accuracy_mean"]), fontsize=6, xytext=(3, -8),
                            textcoords="offset points")
        ax.set_xscale("log")
        ax.set_xlabel("total ε (valid accounting; δ_total = teachers' Δ); right edge: no DP")
        ax.set_ylabel("student accuracy on the held-out half")
        ax.set_title(f"{ds}, m = {m}")
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=7, frameon=False)
    draws = sorted({int(r["draws"]) for r in rows})
    fit_suptitle(fig, "Student accuracy vs total ε per aggregator (mean; error bars ±1 s.d. over "
                      f"{'/'.join(map(str, draws))} draws of the Q queries)", fontsize=10)
    return fig


def student_plot(records: list[dict], path: Path) -> None:
    """Write :func:`student_figure` as a PNG.

    Args:
        records: the study's records (``results.json``) with student fields.
        path: the PNG file (its folder is created; written atomically).

    Raises:
        MissingDependencyError: matplotlib is not installed.
        OSError: ``path`` cannot be written.
    """
    fig = student_figure(records)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    save_png(fig, path, dpi=120)
