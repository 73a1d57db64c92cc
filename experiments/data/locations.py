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

__all__ = ["APP_NAME", "PACKAGE_DIR", "cache_dir", "check_locations", "data_dir", "source_checkout", "user_cache_dir",
           "user_data_dir"]

APP_NAME = "darrm"

#: the ``darrm.experiments`` package folder (``<checkout>/experiments`` or ``<site-packages>/darrm/experiments``)
PACKAGE_DIR = Path(__file__).resolve().parents[1]

_INSTALL_DIRS = {"site-packages", "dist-packages"}


def source_checkout(package_dir: Path | None = None) -> Path | None:
    """The repository root when ``package_dir`` is a source checkout's ``experiments/`` folder.

    Args:
        package_dir: the folder to test (default :data:`PACKAGE_DIR`).

    Returns:
        The checkout's root, or None for an installed package (see the module docstring).

    Raises:
        OSError: a folder on the way cannot be examined (``Path.is_file`` passes on errors other
            than a missing file).
    """
    pkg = Path(package_dir if package_dir is not None else PACKAGE_DIR)
    if _INSTALL_DIRS & set(pkg.parts):
        return None
    root = pkg.parent
    if pkg.name == "experiments" and (root / "pyproject.toml").is_file() and (root / "darrm" / "__init__.py").is_file():
        return root
    return None


def user_cache_dir() -> Path:
    """The per-user cache folder of :func:`platformdirs.user_cache_dir` for ``darrm``.

    Returns:
        The folder (not created here).

    Raises:
        ImportError: platformdirs is missing (it is a dependency of darrm).
    """
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def user_data_dir() -> Path:
    """The per-user data folder of :func:`platformdirs.user_data_dir` for ``darrm``.

    Returns:
        The folder (not created here).

    Raises:
        ImportError: platformdirs is missing (it is a dependency of darrm).
    """
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
    cache directory (:func:`platformdirs.user_cache_dir`).  Not created here.

    Args:
        override: the folder the user named (``--cache-dir``), or None.

    Returns:
        The first of the four that is set.

    Raises:
        ImportError: the user folder is needed and platformdirs is missing.
    """
    return _first_of(override, "DARRM_CACHE", ("data", "cache"), user_cache_dir)


def data_dir(override: str | os.PathLike | None = None) -> Path:
    """The folder downloads go to (``<it>/<dataset>/``): ``override``, ``$DARRM_DATA``,
    ``<checkout>/data``, or the user data directory (:func:`platformdirs.user_data_dir`).

    Args:
        override: the folder the user named (``--data-dir``), or None.

    Returns:
        The first of the four that is set (not created here).

    Raises:
        ImportError: the user folder is needed and platformdirs is missing.
    """
    return _first_of(override, "DARRM_DATA", ("data",), user_data_dir)


def check_locations(out: str | os.PathLike | None, cache_override: str | os.PathLike | None,
                    data_override: str | os.PathLike | None) -> None:
    """The folders of an experiment run, checked before any work (one-line ParameterError naming
    the option or variable):

    * ``--out`` and the cache folder actually used — ``--cache-dir``, else ``$DARRM_CACHE``, else the
      default — are usable output folders (:func:`darrm.paths.check_output_dirs`), and differ;
      ``--out`` is claimed for the run, the cache is not (runs may share it);
    * ``--data-dir`` is an existing folder, ``$DARRM_DATA`` (when no ``--data-dir``) is a folder if
      it exists;
    * neither the cache nor ``--out`` lies inside a data folder the user named (``--data-dir`` or
      ``$DARRM_DATA``): trained teachers never land among the data set's files.

    Args:
        out: the run's output folder (``--out``), or None.
        cache_override: ``--cache-dir``, or None.
        data_override: ``--data-dir``, or None.

    Raises:
        ParameterError: naming the option or variable whose folder fails a check.
    """
    from darrm.errors import ParameterError
    from darrm.paths import check_output_dirs

    env_cache = os.environ.get("DARRM_CACHE")
    cache_name = "cache-dir" if cache_override else ("DARRM_CACHE" if env_cache else "cache-dir")
    cache = cache_dir(cache_override)
    # the cache is shared, not claimed: its files are content-keyed and each written atomically under its
    # own claim, so runs beside each other (one per data set) may use one cache and reuse its entries
    check_output_dirs({"out": out, cache_name: cache}, {"data-dir": data_override}, shared=(cache_name,))
    env_data = os.environ.get("DARRM_DATA")
    data_name, data = ("data-dir", data_override) if data_override else ("DARRM_DATA", env_data)
    if not data:
        return
    d = Path(os.path.realpath(data))
    if Path(data).exists() and not Path(data).is_dir():
        raise ParameterError(data_name, f"{data} is not a directory")
    for name, p in ((cache_name, cache), ("out", out)):
        if p is not None and Path(os.path.realpath(p)).is_relative_to(d):
            raise ParameterError(name, f"{p} is inside the data folder {data_name} ({data}); give a folder outside it")
