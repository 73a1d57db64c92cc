"""The ten-class study's markdown table and its plot of student accuracy against total ε."""

from __future__ import annotations

from pathlib import Path

from darrm.experiments.pate.anchors import anchors
from darrm.experiments.pate.multiclass_config import METHODS
from darrm.experiments.png import pyplot, save_png
from darrm.plotting import fit_legend, fit_suptitle

__all__ = ["MULTICLASS_SMOKE_NOTE", "multiclass_figure", "multiclass_plot", "multiclass_table"]

#: the first line of a ten-class ``--quick`` run's table and of its command-line summary
MULTICLASS_SMOKE_NOTE = ("SMOKE TEST (--quick): 25 teachers on 5000 images, 1000 public images (pool 500), Q = 20, "
                         "2 draws, short training; it "
                         "checks that every stage runs.  Its numbers are not results (no published columns).")

_ORDER = METHODS
_MARKERS = ("o", "s", "^", "P", "D", "v")


def _f(x: float | None, spec: str = ".3f") -> str:
    return "–" if x is None else format(x, spec)


def multiclass_table(records: list[dict], run: dict) -> str:
    """Markdown: one row per (Q, ε_total), label and student accuracy per method (mean (std) over draws).

    Args:
        records: the ten-class study's records (``results.json``).
        run: the run record (``multiclass_run.json``): configuration, times, teacher accuracies.

    Returns:
        The Markdown text of ``multiclass.md`` (the smoke-test note first when the records are a smoke test).

    Raises:
        KeyError: a record lacks a field the study writes.
    """
    smoke = any(r.get("smoke_test") for r in records)
    lines: list[str] = []
    if smoke:
        lines += [MULTICLASS_SMOKE_NOTE, ""]
    ds = records[0]["dataset"] if records else "?"
    K = records[0]["teachers"] if records else "?"
    teach = run.get("teacher_accuracy_on_pool", [])
    semi = any(r.get("student", {}).get("kind") == "semi-supervised" for r in records)
    lines += [f"### {ds}, 10 classes, K = {K} non-private teachers: students at equal total (ε, δ)", "",
              f"Teachers: mean accuracy on the query pool {sum(teach) / max(len(teach), 1):.3f}; their noiseless "
              f"plurality {run.get('plurality_accuracy_on_pool', float('nan')):.3f}.  Protocol: "
              f"{run.get('query_protocol', '?')}.  Cells: label accuracy / student accuracy on the held-out half"
              + (" (semi-supervised student; the supervised MLP baseline after '|')" if semi else "")
              + ", mean (std) over draws; Confident-GNMax: over answered queries [answered count] and its "
              "published data-dependent ε (one noisy draw per draw, smooth sensitivity) in braces.  The ε_total "
              "column is every method's data-independent total.", "",
              "| Q | ε_total | " + " | ".join(_ORDER) + " |", "|---|---|" + "---|" * len(_ORDER)]
    by = {(r["method"], r["epsilon_total"], r["Q"]): r for r in records}
    for Q in sorted({r["Q"] for r in records}):
        for e in sorted({r["epsilon_total"] for r in records if r["epsilon_total"] is not None}):
            cells = []
            for m in _ORDER:
                r = by.get((m, None if m in ("plurality-nonprivate", "true-labels") else e, Q))
                if r is None:
                    cells.append("–")
                    continue
                extra = ""
                if m == "confident-gnmax":
                    pub = r.get("epsilon_published") or []
                    extra = f" [{r['answered_mean']:.0f}]" + (" {ε_pub " + "/".join(f"{p:.2f}" for p in pub) + "}"
                                                             if pub else "")
                base = r.get("baseline_student_accuracy_mean")
                cells.append(f"{_f(r['accuracy_mean'], '.3f')} / {_f(r['student_accuracy_mean'], '.3f')} "
                             f"({_f(r['student_accuracy_std'], '.3f')})"
                             + (f" \\| {_f(base, '.3f')}" if base is not None else "") + extra)
            lines.append(f"| {Q} | {e:g} | " + " | ".join(cells) + " |")
    lines += ["", f"δ_total = {next((r['delta_total'] for r in records if r['delta_total']), '–')} for every private "
              "row.  Accountants:", ""]
    lines += [f"- {m}: {next(r['accountant'] for r in records if r['method'] == m)}" for m in _ORDER
              if any(r["method"] == m for r in records)]
    if not smoke:
        lines += ["", "Published anchors (MNIST, CNN teachers, semi-supervised students) with their own settings run "
                      "through darrm's data-independent accountants (`darrm.experiments.pate.anchors`); the "
                      "published ε is data-dependent, one noisy draw:", "",
                  "| anchor | settings | queries (answered) | ε published (data-dependent) | "
                  "ε data-independent (darrm) | δ | student |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {a.name} | {a.settings} | {a.queries} ({a.answered}) | {a.epsilon_published:.2f} | "
                  f"{a.epsilon_data_independent:.2f} | {a.delta:g} | {a.student_accuracy:.3f} |" for a in anchors()]
    lines += ["", f"Wall time: {run.get('seconds_total', 0):.0f} s in all, teachers "
              f"{run.get('teachers', {}).get('seconds_training', 0):.0f} s "
              f"({run.get('teachers', {}).get('teachers_from_cache', 0)} from the cache), students "
              f"{run.get('seconds_students', 0):.0f} s; CPU ({run.get('cpu', '?')}).", ""]
    return "\n".join(lines)


def multiclass_figure(records: list[dict]):
    """Student accuracy against total ε, one panel per Q, a line per method; the ceiling dashed.

    Args:
        records: the ten-class study's records (``results.json``).

    Returns:
        The matplotlib figure.

    Raises:
        MissingDependencyError: matplotlib is not installed.
        KeyError: a record lacks a field the study writes.
    """
    plt = pyplot("the ten-class student plot")
    Qs = sorted({r["Q"] for r in records})
    fig, axes = plt.subplots(1, max(len(Qs), 1), figsize=(4.2 * max(len(Qs), 1), 4.0), squeeze=False,
                             layout="constrained", sharey=True)
    for ax, Q in zip(axes[0], Qs, strict=True):
        for i, m in enumerate(_ORDER):
            rs = sorted((r for r in records if r["method"] == m and r["Q"] == Q
                         and r["student_accuracy_mean"] is not None and r["epsilon_total"] is not None),
                        key=lambda r: r["epsilon_total"])
            if rs:
                ax.errorbar([r["epsilon_total"] for r in rs], [r["student_accuracy_mean"] for r in rs],
                            yerr=[r["student_accuracy_std"] for r in rs], marker=_MARKERS[i], ms=5, capsize=3,
                            lw=1.0, label=m)
        ceiling = [r for r in records if r["method"] == "plurality-nonprivate" and r["Q"] == Q]
        if ceiling and ceiling[0]["student_accuracy_mean"] is not None:
            ax.axhline(ceiling[0]["student_accuracy_mean"], ls="--", color="gray", lw=1.0,
                       label="plurality-nonprivate (no DP)")
        ax.set_xscale("log")
        ax.set_xlabel("total ε (δ_total = 1e-5)")
        ax.set_title(f"Q = {Q}")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("student accuracy (held-out half)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fit_legend(fig, handles, labels, ncol=4, fontsize=7, frameon=False)
    ds = records[0]["dataset"] if records else "?"
    fit_suptitle(fig, f"{ds}, 10 classes: student accuracy vs total ε at equal (ε, δ) (mean ± s.d. over draws)",
                 fontsize=10)
    return fig


def multiclass_plot(records: list[dict], path: Path) -> None:
    """Write :func:`multiclass_figure` as a PNG.

    Args:
        records: the ten-class study's records (``results.json``).
        path: the PNG file (its folder is created; written atomically).

    Raises:
        MissingDependencyError: matplotlib is not installed.
        OSError: ``path`` cannot be written.
    """
    fig = multiclass_figure(records)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    save_png(fig, path, dpi=120)
