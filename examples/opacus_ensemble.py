"""Train a small ensemble of DP-SGD teachers with Opacus and label public images through a session.

K = 5 teachers, each trained with DP-SGD (the PATE experiment's teacher code,
``darrm.experiments.pate.teachers``) on its own disjoint shard of 5000 MNIST training images of the
digits 5 and 8, vote on 600 public (test) images; a ``LabellingSession`` releases DaRRM labels.

Privacy: one training image lies in one shard, so it changes one teacher, which is (ε_t, Δ)-DP by
its DP-SGD accountant.  The votes are post-processing of the teachers, so any number of labels is
(ε_t, Δ)-DP in total: the session's bound for fixed members (``member_randomness="fixed"``).  The γ
table (members on disjoint shards, ``darrm.DisjointParams``) makes each single label
(ε_t/2, Δ)-DP as well.  Tiny settings (2 epochs, σ = 1): a demonstration that runs in well under a
minute on a CPU, not the paper's experiment (``darrm-experiments pate`` runs that).  Needs the
``experiments`` extra and the MNIST files (``--data-dir`` or ``$DARRM_DATA``; nothing is downloaded).

    .venv/bin/python examples/opacus_ensemble.py --data-dir ../shared/datasets --out example-output
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import darrm

K, TRAIN_SIZE, PUBLIC = 5, 5000, 600


def main(out: Path, data_dir: Path | None) -> None:
    import torch

    from darrm.accounting import LabellingSession
    from darrm.experiments.data.loader import binary_task, load_dataset
    from darrm.experiments.pate.teachers import TeacherConfig, predict, shard_indices, train_teacher

    torch.set_num_threads(1)
    task = binary_task(load_dataset("mnist", data_dir, allow_download=False), (5, 8), train_size=TRAIN_SIZE, seed=0)
    cfg = TeacherConfig(private=True, K=K, epochs=2, lr=0.2, momentum=0.9, noise_multiplier=1.0)
    cpu = torch.device("cpu")
    shards = shard_indices(len(task.train_labels), K, seed=0)
    teachers = [train_teacher(task.train_images[s], task.train_labels[s], cfg, i, device=cpu)
                for i, s in enumerate(shards)]
    eps_t = max(t.info["eps"] for t in teachers)
    print(f"{K} DP-SGD teachers, {len(shards[0])} images each, each ({eps_t:.3f}, {cfg.delta:g})-DP")

    public, truth = task.test_images[:PUBLIC], (task.test_labels[:PUBLIC] == 8).astype(int)
    votes = np.stack([predict(t.state_dict, public, device=cpu) == 8 for t in teachers], axis=1).astype(int)
    table = darrm.solve(darrm.DisjointParams(K, darrm.ApproxDP(eps_t, cfg.delta), eps_t / 2, cfg.delta),
                        darrm.IIDPrior(0.75), progress=False)
    assert darrm.certify(table.gamma, table.params).certified   # the independent certificate
    with LabellingSession(table, budget_epsilon=eps_t, delta=cfg.delta, member_randomness="fixed",
                          rng=0) as session:
        labels = session.label(votes)
        print(f"{session.queries} labels, total ({session.epsilon_spent:.3f}, {cfg.delta:g})-DP ({session.bound})")
    teacher_acc = (votes == truth[:, None]).mean(axis=0)
    majority_acc = float(((votes.sum(axis=1) > K // 2) == truth).mean())
    darrm_acc = float((labels == truth).mean())
    print("teacher accuracy", np.round(teacher_acc, 3), f"majority {majority_acc:.3f}, DaRRM {darrm_acc:.3f}")
    assert darrm_acc > 0.5   # better than a coin

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6), layout="constrained")
    ax.bar([f"teacher {i}" for i in range(K)] + ["majority", "DaRRM"], [*teacher_acc, majority_acc, darrm_acc],
           color=["C0"] * K + ["C1", "C2"])
    ax.set(ylim=(0.5, 1.0), ylabel="accuracy on public images", title="DP-SGD teachers and their labels")
    ax.tick_params(axis="x", rotation=45)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "opacus_ensemble.png", dpi=100)
    print("wrote", out / "opacus_ensemble.png")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("example-output"),
                    help="folder for the figure (default: example-output)")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="folder holding mnist/ (default: $DARRM_DATA, else darrm's data folders)")
    args = ap.parse_args()
    main(args.out, args.data_dir)
