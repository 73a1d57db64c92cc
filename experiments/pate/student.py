"""The PATE student: a model trained on the privately released labels (PyTorch, CPU by default).

PATE (Papernot et al. 2017, Section 2.3; Papernot et al. 2018, Section 5) ends with a *student*
trained on public images that the aggregator labelled; the student is what is deployed, so an
aggregator is judged by the student's accuracy at its total (ε, δ).  The DaRRM paper (Section 6.2)
stops at the released labels; this module adds the student.

Privacy.  The student sees the query pool's images (public), the Q released labels (already
private: any function of them is post-processing), and, with self-training, its own
pseudo-labels on the rest of the pool (a function of public images and released labels), so it
costs nothing beyond the aggregator's total (ε, δ).  It never sees a teacher, a vote, a true
label of the pool, or anything of the held-out half (:class:`~.public_split.HeldOutSet`).

Training: a one-hidden-layer MLP (:class:`StudentMLP`; ~30× cheaper per step than the teachers' CNN
on a shared 2-core CPU, where hundreds of students are trained per study), Adam,
a fixed number of minibatch steps (so a student on 20 labels is trained as long as one on 500),
then, with ``self_training``, one round of pseudo-labelling: pool images whose predicted class
has softmax probability ≥ ``confidence`` join the labelled set with that label and training
continues for the same number of steps.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from darrm.errors import ParameterError
from darrm.experiments.pate.model import to_tensor
from darrm.experiments.pate.semi_supervised import train_semi_supervised
from darrm.experiments.pate.student_config import SemiSupervisedConfig, StudentConfig, TrainedStudent

__all__ = ["StudentConfig", "StudentMLP", "TrainedStudent", "train_student"]


class StudentMLP(nn.Module):
    """784 → ``hidden`` → ReLU → C logits.

    Args:
        n_classes: number of logits C.
        hidden: width of the hidden layer.
    """

    def __init__(self, n_classes: int, hidden: int = 128):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, hidden), nn.ReLU(), nn.Linear(hidden, n_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def _fit(model: nn.Module, x: torch.Tensor, y: torch.Tensor, cfg: StudentConfig, gen: torch.Generator) -> None:
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    loss_fn = nn.CrossEntropyLoss()
    b = min(cfg.batch_size, len(y))
    model.train()
    for _ in range(cfg.steps):
        i = torch.randint(len(y), (b,), generator=gen)
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x[i]), y[i]).backward()
        opt.step()


@torch.no_grad()
def _probabilities(model: nn.Module, x: torch.Tensor, batch: int = 2048) -> torch.Tensor:
    model.eval()
    return torch.cat([torch.softmax(model(x[i:i + batch]), 1) for i in range(0, len(x), batch)])


def train_student(images: np.ndarray, labels: np.ndarray, unlabelled: np.ndarray, classes: tuple[int, ...],
                  cfg: StudentConfig | SemiSupervisedConfig, seed: int) -> TrainedStudent:
    """Train a student on released labels (and, with self-training, pseudo-labels on ``unlabelled``).

    A :class:`~.student_config.SemiSupervisedConfig` trains the semi-supervised student
    (:func:`.semi_supervised.train_semi_supervised`: label spreading and a CNN on the pool); a
    :class:`~.student_config.StudentConfig` the supervised MLP baseline.  Both on one torch thread.

    Args:
        images: the Q queried public images, uint8 ``(Q, 28, 28)``.
        labels: the labels the aggregator released for them (values in ``classes``).
        unlabelled: the pool's other public images (used only when ``cfg.self_training``).
        classes: the label space, in head order.
        cfg: training settings.
        seed: seeds the initialisation and the minibatches (torch).

    Returns:
        The :class:`TrainedStudent` (its ``info``: labelled and pseudo-labelled counts).

    Raises:
        ParameterError: labels outside ``classes`` or a length mismatch.
    """
    classes = tuple(int(c) for c in classes)
    lab = np.asarray(labels)
    if len(lab) != len(images) or len(lab) == 0:
        raise ParameterError("labels", f"need one released label per image, got {len(lab)} for {len(images)}")
    lookup = {c: i for i, c in enumerate(classes)}
    if not set(np.unique(lab).tolist()) <= set(lookup):
        raise ParameterError("labels", f"released labels {sorted(set(np.unique(lab).tolist()))} outside {classes}")
    threads = torch.get_num_threads()
    # one thread: on the shared 2-core machine two contending threads made the CNN's step 4-6x slower
    # (0.86 s against 0.15 s per minibatch of 128 at load 5), and the MLP's matrices are small
    torch.set_num_threads(1)
    try:
        if isinstance(cfg, SemiSupervisedConfig):
            return train_semi_supervised(images, lab, unlabelled, classes, cfg, seed)
        return _train(images, lab, unlabelled, classes, lookup, cfg, seed)
    finally:
        torch.set_num_threads(threads)


def _train(images: np.ndarray, lab: np.ndarray, unlabelled: np.ndarray, classes: tuple[int, ...],
           lookup: dict[int, int], cfg: StudentConfig, seed: int) -> TrainedStudent:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model = StudentMLP(len(classes), cfg.hidden)
    x = to_tensor(images)
    y = torch.as_tensor([lookup[int(v)] for v in lab], dtype=torch.long)
    _fit(model, x, y, cfg, gen)
    n_pseudo = 0
    if cfg.self_training and len(unlabelled):
        xu = to_tensor(unlabelled)
        conf, pseudo = _probabilities(model, xu).max(1)
        keep = conf >= cfg.confidence
        n_pseudo = int(keep.sum())
        if n_pseudo:
            _fit(model, torch.cat([x, xu[keep]]), torch.cat([y, pseudo[keep]]), cfg, gen)
    model.eval()
    head = np.asarray(classes, dtype=np.int64)

    def predict(batch: np.ndarray) -> np.ndarray:
        return head[_probabilities(model, to_tensor(batch)).argmax(1).numpy()]

    return TrainedStudent(predict, {"labelled": int(len(lab)), "pseudo_labelled": n_pseudo})
