"""Where the experiments keep downloads and caches: never inside the installed package.

Installed from a wheel, the package lives in ``site-packages``, which may be read-only and is
shared by every user; paths relative to the package would also vanish with an upgrade.  So:

* **cache** (trained teachers, vote matrices): the ``cache_dir`` argument (``--cache-dir``), else
  ``$DARRM_CACHE``, else ``<checkout>/data/cache`` when running from a source checkout
  (gitignored), else the user cache directory of :mod:`platformdirs`
  (``~/.cache/darrm`` on Linux, ``~/Library/Caches/darrm`` on macOS, ``%LOCALAPPDATA%\\darrm\\Cache``
  on Windows);
* **data** (downloaded MNIST / Fashion-MNIST): the ``data_dir`` argument (``--data-dir``), else
  ``$DARRM_DATA``, else ``<checkout>/data``, else the user data directory of :mod:`platformdirs`
  (``~/.local/share/darrm`` on Linux).

A *source checkout* is recognised from this package's own location: ``darrm.experiments`` is the
folder ``experiments/`` of a tree that also holds ``pyproject.toml`` and ``darrm/__init__.py``
(an editable install or ``PYTHONPATH``), and no part of the path is ``site-packages`` or
``dist-packages``.  Only then are the repository-relative places (``data/``,
``../shared/datasets``) used.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["APP_NAME", "PACKAGE_DIR", "cache_dir", "data_dir", "source_checkout", "user_cache_dir", "user_data_dir"]

APP_NAME = "darrm"

#: the ``darrm.experiments`` package folder (``<checkout>/experiments`` or ``<site-packages>/darrm/experiments``)
PACKAGE_DIR = Path(__file__).resolve().parents[1]

_INSTALL_DIRS = {"site-packages", "dist-packages"}


def source_checkout(package_dir: Path | None = None) -> Path | None:
    """The repository root when ``package_dir`` (default :data:`PACKAGE_DIR`) is a source
    checkout's ``experiments/`` folder, else None (see the module docstring)."""
    pkg = Path(package_dir if package_dir is not None else PACKAGE_DIR)
    if _INSTALL_DIRS & set(pkg.parts):
        return None
    root = pkg.parent
    if pkg.name == "experiments" and (root / "pyproject.toml").is_file() and (root / "darrm" / "__init__.py").is_file():
        return root
    return None


def user_cache_dir() -> Path:
    """The per-user cache folder of :func:`platformdirs.user_cache_dir` for ``darrm``."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def user_data_dir() -> Path:
    """The per-user data folder of :func:`platformdirs.user_data_dir` for ``darrm``."""
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def _first_of(override: str | os.PathLike | None, env: str, in_checkout: tuple[str, ...],
              user: Callable[[], Path]) -> Path:
    """``override``, else ``$env``, else ``<checkout>/<in_checkout>``, else ``user()`` (one order for
    every folder)."""
    if override:
        return Path(override)
    value = os.environ.get(env)
    if value:
        return Path(value)
    root = source_checkout()
    return root.joinpath(*in_checkout) if root is not None else user()


def cache_dir(override: str | os.PathLike | None = None) -> Path:
    """The cache folder: ``override``, ``$DARRM_CACHE``, ``<checkout>/data/cache``, or the user
    cache directory (:func:`platformdirs.user_cache_dir`).  Not created here."""
    return _first_of(override, "DARRM_CACHE", ("data", "cache"), user_cache_dir)


def data_dir(override: str | os.PathLike | None = None) -> Path:
    """The folder downloads go to (``<it>/<dataset>/``): ``override``, ``$DARRM_DATA``,
    ``<checkout>/data``, or the user data directory (:func:`platformdirs.user_data_dir`)."""
    return _first_of(override, "DARRM_DATA", ("data",), user_data_dir)
