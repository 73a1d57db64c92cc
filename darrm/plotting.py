"""The one optional loader of matplotlib (the ``plot`` extra), headless."""

from __future__ import annotations

from .errors import require


def pyplot(purpose: str = "plotting"):
    """``matplotlib.pyplot`` on the non-interactive Agg backend, or a one-line
    :class:`~darrm.errors.MissingDependencyError` naming ``pip install 'darrm[plot]'``."""
    matplotlib = require("matplotlib", "plot", purpose)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
