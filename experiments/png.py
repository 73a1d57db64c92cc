"""Figures of the experiments written as PNG files atomically (matplotlib through
:func:`darrm.plotting.pyplot`, the one optional loader)."""

from __future__ import annotations

import io
import os

from darrm.atomic import atomic_write_bytes
from darrm.plotting import pyplot

__all__ = ["pyplot", "save_png"]


def save_png(fig, path: str | os.PathLike, dpi: int) -> None:
    """Render ``fig`` to PNG, write it to ``path`` atomically and close it.

    Args:
        fig: a matplotlib figure.
        path: the PNG file.
        dpi: the resolution.

    Raises:
        OSError: the file cannot be written.
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    pyplot("figures").close(fig)
    atomic_write_bytes(path, buf.getvalue())
