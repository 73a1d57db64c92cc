"""Regenerate the guides' figures and the site's notebook pages from examples/notebooks/.

The notebooks are the one source of every figure: this script executes each notebook with
nbclient (in a scratch folder, so nothing is written beside it), takes the image output of every
code cell tagged ``docs-figure:NAME`` and writes it to ``docs/figures/NAME.png``, and writes the
executed notebook, outputs and figures included, to ``docs/notebooks/NAME.ipynb`` (atomically).
The guides embed those PNGs and the site renders those notebooks as pages (mkdocs-jupyter, which
does not execute them: the tests do).  ``tests/test_notebooks.py`` executes the same notebooks
through :func:`execute`, checks that :func:`write_figures` writes every figure the guides embed,
and that each committed page holds the notebook's current cells with the outputs they produce.

    DARRM_DATA=../shared/datasets .venv/bin/python docs/figures/make_figures.py   # figures and pages
    .venv/bin/python docs/figures/make_figures.py --out DIR --pages DIR            # somewhere else

The Opacus notebook (04) needs the MNIST files in ``$DARRM_DATA`` and the ``experiments`` extra.
Needs the ``test`` extra (nbclient, nbformat, ipykernel) and matplotlib.
"""

from __future__ import annotations

import argparse
import base64
import copy
import os
import re
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "examples" / "notebooks"
FIGURES = Path(__file__).resolve().parent
PAGES = ROOT / "docs" / "notebooks"
TAG = "docs-figure:"
#: the notebooks whose figures the guides embed (04 needs the MNIST files, and the guides no figure of it)
DOC_NOTEBOOKS = ("01_gamma_shapes.ipynb", "02_shuffle_bounds.ipynb", "03_total_budget.ipynb")


def execute(path: Path, *, timeout: int = 300, env: dict[str, str] | None = None):
    """Execute a notebook in a fresh kernel, in a scratch working folder.

    Args:
        path: the ``.ipynb`` file.
        timeout: seconds allowed per cell.
        env: extra environment variables for the kernel (e.g. ``DARRM_DATA``).

    Returns:
        The executed notebook (an ``nbformat.NotebookNode`` with outputs).

    Raises:
        nbclient.exceptions.CellExecutionError: a cell raised (the message names the cell and the error).
    """
    import nbformat
    from nbclient import NotebookClient

    book = nbformat.read(path, as_version=4)
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    try:
        with tempfile.TemporaryDirectory(prefix="darrm-notebook-") as scratch:
            NotebookClient(book, timeout=timeout, kernel_name="python3",
                           resources={"metadata": {"path": scratch}}).execute()
    finally:
        for k, old in saved.items():
            if old is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = old
    return book


def images(book) -> list[bytes]:
    """Every PNG image output of an executed notebook, in cell order."""
    return [base64.b64decode(out["data"]["image/png"]) for cell in book.cells if cell.cell_type == "code"
            for out in cell.get("outputs", ()) if "image/png" in out.get("data", {})]


def tagged_figures(book) -> dict[str, bytes]:
    """NAME → the last PNG output of the code cell tagged ``docs-figure:NAME``.

    Raises:
        ValueError: a tagged cell produced no image.
    """
    found = {}
    for cell in book.cells:
        for tag in cell.get("metadata", {}).get("tags", ()):
            if tag.startswith(TAG):
                pngs = [o["data"]["image/png"] for o in cell.get("outputs", ()) if "image/png" in o.get("data", {})]
                if not pngs:
                    raise ValueError(f"the cell tagged {tag!r} produced no image")
                found[tag[len(TAG):]] = base64.b64decode(pngs[-1])
    return found


def write_figures(book, out: Path) -> list[Path]:
    """Write the tagged figures of an executed notebook to ``out/NAME.png``; the paths written."""
    from darrm.atomic import atomic_write_bytes

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, png in tagged_figures(book).items():
        atomic_write_bytes(out / f"{name}.png", png)
        written.append(out / f"{name}.png")
    return written


#: the banner the HiGHS library prints on stdout when it first solves (not the notebook's output)
BANNER = re.compile(r"^(Running HiGHS \d.*|Includes third-party software components.*)\n", re.M)


def page_outputs(outputs: list) -> list:
    """What a page shows of a cell's outputs: all but the kernel's stderr (a progress bar's
    warning naming the local install path) and the solver library's banner on stdout
    (:data:`BANNER`).  A cell that raised keeps its error."""
    shown = []
    for o in outputs:
        if o.get("output_type") == "stream":
            if o.get("name") == "stderr":
                continue
            text = o["text"] if isinstance(o["text"], str) else "".join(o["text"])
            if not BANNER.sub("", text):
                continue
            o = {**o, "text": BANNER.sub("", text)}
        shown.append(o)
    return shown


def write_page(book, out: Path, name: str) -> Path:
    """Write an executed notebook to ``out/name`` for the site, without the run's timestamps and
    stderr (:func:`page_outputs`)."""
    import nbformat

    from darrm.atomic import atomic_write_bytes

    book = copy.deepcopy(book)
    for cell in book.cells:
        cell.get("metadata", {}).pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = [nbformat.from_dict(o) for o in page_outputs(cell.outputs)]
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out / name, (nbformat.writes(book) + "\n").encode("utf-8"))
    return out / name


def main(out: Path = FIGURES, pages: Path = PAGES) -> list[Path]:
    """Execute every notebook; write the tagged figures into ``out`` and the executed notebooks into ``pages``."""
    written = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        book = execute(path)
        if path.name in DOC_NOTEBOOKS:
            written += write_figures(book, out)
        written.append(write_page(book, pages, path.name))
    return written


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=FIGURES, help=f"folder for the PNGs (default: {FIGURES})")
    ap.add_argument("--pages", type=Path, default=PAGES, help=f"folder for the executed notebooks (default: {PAGES})")
    args = ap.parse_args()
    for path in main(args.out, args.pages):
        print("wrote", path)
