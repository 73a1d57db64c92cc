"""The teachers' CNN (DaRRM paper Section 6.2; architecture from the reference code; Appendix D.2).

Conv(1→16, k5, p2) → ReLU → MaxPool2 → Conv(16→32, k5, p2) → ReLU → MaxPool2 → Linear(1568, n).
Only layers Opacus computes per-sample gradients for (Conv2d, Linear), no batch norm, so the
model can be wrapped by ``opacus.PrivacyEngine.make_private`` unchanged.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

__all__ = ["CNN", "to_tensor"]


class CNN(nn.Module):
    """Reference CNN; ``n_classes=10`` as in the reference query scripts (labels stay 5/8).

    Args:
        n_classes: number of outputs (logits).
    """

    def __init__(self, n_classes: int = 10):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(1, 16, 5, 1, 2), nn.ReLU(), nn.MaxPool2d(2))
        self.conv2 = nn.Sequential(nn.Conv2d(16, 32, 5, 1, 2), nn.ReLU(), nn.MaxPool2d(2))
        self.out = nn.Linear(32 * 7 * 7, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv2(self.conv1(x))
        return self.out(x.flatten(1))


def to_tensor(images: np.ndarray) -> torch.Tensor:
    """uint8 ``(n, 28, 28)`` → float32 ``(n, 1, 28, 28)`` in [0, 1] (the reference ``ToTensor()``).

    Args:
        images: uint8 images ``(n, 28, 28)`` (any numeric dtype converts).

    Returns:
        The float32 tensor ``(n, 1, 28, 28)``, each pixel divided by 255.

    Raises:
        ValueError: ``images`` cannot be converted to a float32 array.
    """
    return torch.from_numpy(np.ascontiguousarray(images, dtype=np.float32) / 255.0).unsqueeze(1)
