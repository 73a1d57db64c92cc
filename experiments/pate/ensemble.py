"""Train (or reload) an ensemble of K teachers and their votes on the public (test) set, cached.

Cache layout, under ``<cache_dir>/<dataset>-<private|nonprivate>-<key>/`` where ``key`` hashes
the data (content hashes of the selected images/labels), the :class:`TeacherConfig` and the
library versions:

* ``settings.json`` — what the key was computed from;
* ``shards.npz`` — the train-index split (indices into the two-class training set);
* ``teacher_XX.pt`` — one file per trained teacher (state dict + training record), so an
  interrupted run resumes at the first missing teacher;
* ``votes.npy`` — ``(n_test, K)`` int64 predicted labels of every teacher on the test set.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from darrm.atomic import atomic_write_bytes, atomic_write_json
from darrm.errors import DarrmError
from darrm.experiments.cache import load_npy, save_npy, settings_key
from darrm.experiments.data.loader import BinaryTask
from darrm.experiments.pate.model import CNN
from darrm.experiments.pate.teachers import (
    TeacherConfig,
    pick_device,
    predict,
    shard_indices,
    train_teacher,
    warn_weak_teachers,
)

__all__ = ["CacheError", "Ensemble", "ensemble_dir", "get_ensemble", "load_teacher", "load_votes"]

#: a two-class teacher below this test accuracy is reported by a warning (chance is 0.5; the failed
#: non-private teachers of the committed results sat at 0.500 and 0.557, working ones at 0.83 and above)
TWO_CLASS_WARN_ACCURACY = 0.6


class CacheError(DarrmError):
    """A file of the teacher cache is unreadable or does not hold what the cache writes."""


def load_teacher(path: Path, n_classes: int) -> tuple[dict, dict]:
    """The (state dict, training record) of a cached ``teacher_XX.pt``, checked.

    Loaded with ``torch.load(weights_only=True)``: only tensors and plain containers are
    unpickled, so a planted file cannot run code.  The state dict must have exactly the
    keys, shapes and dtypes of :class:`~darrm.experiments.pate.model.CNN`; the record must be
    a dict of plain values.

    Args:
        path: the ``teacher_XX.pt`` file.
        n_classes: the CNN's number of outputs, which fixes the last layer's shapes.

    Returns:
        ``(state_dict, info)``: the CNN's tensors and the teacher's training record.

    Raises:
        CacheError: unreadable, or anything other than what the cache writes (naming the file).
    """
    def bad(why: str) -> CacheError:
        return CacheError(f"{path}: not a teacher cache file ({why}); delete it to retrain that teacher")

    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - UnpicklingError, RuntimeError, EOFError, ... all mean "bad file"
        raise bad(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")) from None
    if not isinstance(blob, dict) or set(blob) != {"state_dict", "info"}:
        raise bad("expected a dict with keys 'state_dict' and 'info'")
    state, info = blob["state_dict"], blob["info"]
    if not isinstance(info, dict) or not all(
        isinstance(k, str) and (v is None or isinstance(v, (bool, int, float, str))) for k, v in info.items()
    ):
        raise bad("'info' must be a dict of plain values")
    expected = CNN(n_classes).state_dict()
    if not isinstance(state, dict) or set(state) != set(expected):
        raise bad(f"state dict keys differ from the CNN's {sorted(expected)}")
    for k, ref in expected.items():
        v = state[k]
        if not isinstance(v, torch.Tensor) or v.shape != ref.shape or v.dtype != ref.dtype:
            got = (tuple(v.shape), v.dtype) if isinstance(v, torch.Tensor) else type(v).__name__
            raise bad(f"{k!r} is {got}, expected {(tuple(ref.shape), ref.dtype)}")
        if not torch.isfinite(v).all():
            raise bad(f"{k!r} holds NaN or infinite values")
    return state, info


@dataclass(frozen=True)
class Ensemble:
    """Votes ``(n_test, K)`` of K teachers on the test images, with per-teacher records.

    Attributes:
        config: the teachers' training settings.
        votes: int64 ``(n_test, K)``: teacher k's label of test image i.
        teachers: one training record per teacher (ε, steps, accuracy, whether it was reloaded).
        shards: the K disjoint index arrays into the training set, one per teacher.
        directory: the ensemble's cache folder (``<cache root>/<cache key>``).
    """

    config: TeacherConfig
    votes: np.ndarray
    teachers: tuple[dict, ...]
    shards: tuple[np.ndarray, ...]
    directory: Path


def _digest(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def ensemble_settings(task: BinaryTask, cfg: TeacherConfig) -> dict:
    import opacus

    return {
        "dataset": task.name,
        "classes": list(task.classes),
        "train_sha256": _digest(task.train_images, task.train_labels),
        # votes depend on the test images only (never on their labels)
        "test_images_sha256": _digest(task.test_images),
        "config": cfg.as_dict(),
        "torch": torch.__version__.split("+")[0],
        "opacus": opacus.__version__,
    }


def load_votes(path: Path, n_test: int, K: int, n_classes: int) -> np.ndarray:
    """The cached ``votes.npy``, checked to be what :func:`get_ensemble` writes: an ``(n_test, K)``
    integer array of class labels in ``[0, n_classes)`` (loaded without pickles).

    Args:
        path: the ``votes.npy`` file.
        n_test: the expected number of rows (test images).
        K: the expected number of columns (teachers).
        n_classes: labels must lie in ``[0, n_classes)``.

    Returns:
        The int64 ``(n_test, K)`` vote array.

    Raises:
        CacheError: unreadable, or another shape, dtype or label range (naming the file).
    """
    def bad(why: str) -> CacheError:
        return CacheError(f"{path}: not a vote cache file ({why}); delete it to recompute the votes")

    try:
        votes = load_npy(path)
    except (OSError, ValueError, EOFError) as exc:
        raise bad(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    if votes.shape != (n_test, K):
        raise bad(f"shape {votes.shape}, expected {(n_test, K)}")
    if not np.issubdtype(votes.dtype, np.integer):
        raise bad(f"dtype {votes.dtype}, expected integer labels")
    if votes.size and (votes.min() < 0 or votes.max() >= n_classes):
        raise bad(f"labels outside [0, {n_classes})")
    return votes.astype(np.int64, copy=False)


def ensemble_dir(task: BinaryTask, cfg: TeacherConfig, cache_dir: Path) -> Path:
    """The cache folder of the ensemble ``cfg`` trains on ``task``:
    ``<cache_dir>/<task>-<private|nonprivate>-<key>``, the key a hash of the data and the settings.

    Args:
        task: the two-class task (its name and arrays enter the key).
        cfg: the teachers' settings.
        cache_dir: the cache root.

    Returns:
        The folder (not created here).

    Raises:
        ValueError: the settings hold a circular reference (not the case for a validated ``cfg``).
    """
    kind = "private" if cfg.private else "nonprivate"
    return Path(cache_dir) / f"{task.name}-{kind}-{settings_key(ensemble_settings(task, cfg))}"


def get_ensemble(
    task: BinaryTask,
    cfg: TeacherConfig,
    cache_dir: Path,
    device: torch.device | None = None,
    progress: bool = True,
) -> Ensemble:
    """Train the K teachers of ``cfg`` on disjoint shards of ``task`` (or reload them) and vote.

    Each teacher is written to the cache as soon as it is trained, so an interrupted run resumes
    at the first missing one; the votes on the test images are cached too.

    Args:
        task: the two-class task (training shards, test images).
        cfg: the teachers' settings (K, DP-SGD or not, epochs, seed).
        cache_dir: the cache root (:func:`ensemble_dir` names the folder under it).
        device: torch device to train and predict on (default: :func:`~darrm.experiments.pate.teachers.pick_device`).
        progress: show progress bars.

    Returns:
        The :class:`Ensemble`: votes, per-teacher records (with test accuracy), shards and folder.

    Raises:
        CacheError: a cached teacher or vote file is not what the cache writes.
        OSError: the cache folder cannot be written.
    """
    device = device or pick_device()
    d = ensemble_dir(task, cfg, cache_dir)
    d.mkdir(parents=True, exist_ok=True)
    atomic_write_json(d / "settings.json", ensemble_settings(task, cfg))
    shards = shard_indices(len(task.train_labels), cfg.K, cfg.seed)
    if not (d / "shards.npz").is_file():
        buf = io.BytesIO()
        arrays: dict[str, Any] = {f"shard_{i:02d}": s for i, s in enumerate(shards)}
        np.savez(buf, **arrays)
        atomic_write_bytes(d / "shards.npz", buf.getvalue())
    kind = "DP-SGD" if cfg.private else "SGD"
    records, states = [], []
    for i in tqdm(range(cfg.K), desc=f"{task.name}: {kind} teachers", disable=not progress, leave=False):
        path = d / f"teacher_{i:02d}.pt"
        if path.is_file():
            state, info = load_teacher(path, cfg.n_classes)
            info = dict(info, cached=True)
        else:
            t = train_teacher(task.train_images[shards[i]], task.train_labels[shards[i]], cfg, i, device)
            state, info = t.state_dict, t.info
            buf = io.BytesIO()
            torch.save({"state_dict": state, "info": info}, buf)
            atomic_write_bytes(path, buf.getvalue())
            info = dict(info, cached=False)
        records.append(info)
        states.append(state)
    vpath = d / "votes.npy"
    if vpath.is_file():
        votes = load_votes(vpath, len(task.test_labels), cfg.K, cfg.n_classes)
    else:
        cols = [predict(s, task.test_images, cfg.n_classes, device)
                for s in tqdm(states, desc=f"{task.name}: {kind} votes", disable=not progress, leave=False)]
        votes = np.stack(cols, axis=1).astype(np.int64)
        save_npy(vpath, votes)
    for i, info in enumerate(records):
        info["test_accuracy"] = float(np.mean(votes[:, i] == task.test_labels))
    warn_weak_teachers([r["test_accuracy"] for r in records], TWO_CLASS_WARN_ACCURACY,
                       f"the {task.name} two-class test set ({kind})")
    return Ensemble(cfg, votes, tuple(records), tuple(shards), d)
