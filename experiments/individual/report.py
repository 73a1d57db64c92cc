"""Files of the individualised-budgets study: results.json, individual.md, individual.png (atomic)."""

from __future__ import annotations

from pathlib import Path

from darrm.atomic import atomic_write_bytes, atomic_write_json
from darrm.experiments.individual.run import METHODS
from darrm.experiments.png import pyplot, save_png

__all__ = ["markdown", "write_results"]


def markdown(result: dict) -> str:
    """The study's tables: label accuracy per method and Q, the calibration, the shared-data simulation."""
    cfg, run = result["config"], result["run"]
    quick = " (smoke test: --quick)" if cfg["K"] < 101 else ""
    lines = [f"## Individualised budgets on {cfg['dataset']} {cfg['classes'][0]} vs {cfg['classes'][1]}{quick}", "",
             f"K = {cfg['K']} non-private teachers; record groups: totals ε = "
             f"{', '.join(f'{b:g}' for b in cfg['budgets'])} for {', '.join(f'{s:.0%}' for s in cfg['shares'])} "
             f"of the {run['records']} records (δ_total = {cfg['delta_total']:g}), copies r_g = "
             f"{', '.join(map(str, cfg['copies']))}; {cfg['draws']} draws of Q pool queries.", "",
             "| method | " + " | ".join(f"Q = {q}" for q in cfg["queries"]) + " |",
             "|---|" + "---|" * len(cfg["queries"])]
    by = {(r["method"], r["Q"]): r for r in result["rows"]}
    for m in METHODS:
        lines.append(f"| {m} | " + " | ".join(
            f"{by[(m, q)]['accuracy_mean']:.3f} ± {by[(m, q)]['accuracy_std']:.3f}" for q in cfg["queries"]) + " |")
    lines += ["", "| Q | DaRRM ε_q per group | GNMax σ worst / upsample / weight | weights | "
                  "DaRRM E[error] individual / per-group / weighted / worst |", "|---|---|---|---|---|"]
    for c in result["calibration"]:
        lines.append(f"| {c['Q']} | {', '.join(f'{e:.4f}' for e in c['eps_query'])} | {c['sigma_worst']:.1f} / "
                     f"{c['sigma_upsample']:.1f} / {c['sigma_weight']:.1f} | "
                     f"{', '.join(f'{w:.2f}' for w in c['weights'])} | "
                     f"{c['darrm_individual']['expected_error']:.4f} / {c['darrm_per_group']['expected_error']:.4f} / "
                     f"{c['darrm_weighted']['expected_error']:.4f} / {c['darrm_worst']['expected_error']:.4f} |")
    lines += ["", "DaRRM designed for each group's total (γ whose certified Q-fold composition meets every group's "
                  "(ε_g, δ_total); each total re-checked by the model's verifier):", "",
              "| Q | table | E[error] | winning shape | E[error] of the best baseline shape | "
              "charged ε per group (accountant) |", "|---|---|---|---|---|---|"]
    for c in result["calibration"]:
        for key, name in (("darrm_designed_individual", "upsampled teachers (ShardGroupParams)"),
                          ("darrm_designed_per_group", "weighting teachers, γ per group count (WeightedShardParams)")):
            d = c[key]
            lines.append(f"| {c['Q']} | {name} | {d['expected_error']:.5f} | {d['winner']} | "
                         + ("–" if d["baseline_error"] is None else f"{d['baseline_error']:.5f}") + " | " + ", ".join(
                             f"{g['composed_epsilon']:.3f} of {g['epsilon']:g} ({g['accountant']})"
                             for g in d["groups"]) + " |")
    lines += ["", "Shared data (members with their own budgets): K = 11, k members at (0.1, 1e-5), "
                  "11 − k at (0.3, 1e-5), target "
                  "(0.5, 1e-4), prior i.i.d. 0.75; expected error of γ_opt(L).", "",
              "| k at 0.1 | groups | all at the worst budget (0.3) | all at 0.1 |", "|---|---|---|---|"]
    for s in result["simulation"]:
        lines.append(f"| {s['better']} | {s['groups']:.5f} | {s['all_at_worst']:.5f} | {s['all_at_best']:.5f} |")
    return "\n".join(lines) + "\n"


def figure(result: dict):
    """Label accuracy per method (bars with the draws' std) for each Q, and the simulation's errors."""
    plt = pyplot("the individualised-budgets plot")
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    qs = result["config"]["queries"]
    width = 0.8 / len(qs)
    by = {(r["method"], r["Q"]): r for r in result["rows"]}
    for i, q in enumerate(qs):
        xs = [j + i * width for j in range(len(METHODS))]
        a.bar(xs, [by[(m, q)]["accuracy_mean"] for m in METHODS], width,
              yerr=[by[(m, q)]["accuracy_std"] for m in METHODS], label=f"Q = {q}", capsize=3)
    a.set_xticks([j + 0.4 - width / 2 for j in range(len(METHODS))], METHODS, rotation=30, ha="right", fontsize=8)
    a.set_ylabel("label accuracy")
    a.set_ylim(0.4, 1.02)
    a.legend(fontsize=8)
    a.set_title("released labels (equal per-group totals)", fontsize=10)
    sim = result["simulation"]
    ks = [s["better"] for s in sim]
    for key, mk in (("groups", "o"), ("all_at_worst", "s"), ("all_at_best", "^")):
        b.plot(ks, [s[key] for s in sim], marker=mk, label=key.replace("_", " "))
    b.set_xlabel("members at (0.1, 1e-5) out of K = 11 (the rest at 0.3)")
    b.set_ylabel("expected error of γ_opt")
    b.grid(alpha=0.3)
    b.legend(fontsize=8)
    b.set_title("shared data, target (0.5, 1e-4)", fontsize=10)
    return fig


def write_results(result: dict, out: Path) -> list[Path]:
    """``results.json``, ``individual.md`` and ``individual.png`` in ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "results.json", out / "individual.md", out / "individual.png"]
    atomic_write_json(paths[0], result)
    atomic_write_bytes(paths[1], markdown(result).encode())
    save_png(figure(result), paths[2], dpi=110)
    return paths
