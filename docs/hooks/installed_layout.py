"""The package laid out as it installs, for tools that read sources instead of importing them.

pyproject's ``package-dir`` installs the folders ``accounting/`` and ``experiments/`` as
``darrm.accounting`` and ``darrm.experiments``.  Tools that find modules by walking folders —
griffe (behind mkdocstrings) and mypy — know nothing of that mapping and would see no
``darrm.accounting``.  :func:`installed_layout` builds a tree of symlinks laid out as installed::

    darrm/<every entry of darrm/>   -> darrm/<entry>
    darrm/accounting                -> accounting/
    darrm/experiments               -> experiments/

As an MkDocs hook (``hooks:`` in mkdocs.yml), :func:`on_config` builds it in a temporary folder
and puts that folder first on the mkdocstrings python handler's search paths.
``tests/test_static_checks.py`` runs mypy in the same layout.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

try:
    from mkdocs.plugins import event_priority
except ImportError:  # imported without mkdocs, by tests/test_static_checks.py for installed_layout()

    def event_priority(priority: float) -> Any:
        return lambda method: method

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = {"darrm": ROOT / "darrm", "darrm/accounting": ROOT / "accounting", "darrm/experiments": ROOT / "experiments"}


def installed_layout(where: Path) -> Path:
    """Build the tree of symlinks under ``where`` (which must not hold a ``darrm`` folder yet)."""
    pkg = where / "darrm"
    pkg.mkdir(parents=True)
    for child in sorted(LAYOUT["darrm"].iterdir()):
        if child.name != "__pycache__":
            (pkg / child.name).symlink_to(child, target_is_directory=child.is_dir())
    for name in ("darrm/accounting", "darrm/experiments"):
        (where / name).symlink_to(LAYOUT[name], target_is_directory=True)
    return where


@event_priority(100)  # before mkdocstrings' on_config, which creates the python handler
def on_config(config: Any) -> Any:
    """MkDocs hook: mkdocstrings reads the sources through the installed layout."""
    tree = Path(tempfile.mkdtemp(prefix="darrm-docs-layout-"))
    atexit.register(shutil.rmtree, tree, True)
    installed_layout(tree)
    handlers = config.plugins["mkdocstrings"].config.handlers
    python = handlers.setdefault("python", {})
    python["paths"] = [str(tree), *python.get("paths", [])]
    return config
