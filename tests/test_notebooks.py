"""The notebooks of examples/notebooks/ execute without error and draw their figures, the guides'
figures are what those notebooks draw, and the site's notebook pages (docs/notebooks/, rendered by
mkdocs-jupyter without executing them) are those notebooks, executed.

Each notebook runs once, in a fresh kernel and a scratch folder, through the same function that
regenerates the guides' figures (``docs/figures/make_figures.py``).  Each notebook asserts its own
claims (γ_opt no worse than the closed forms, a valid lower bound below the valid upper bound,
the design never worse than the per-query families at equal total ε, DaRRM labels better than a
coin), so a wrong number fails its run; a cell that raises fails the test with the cell named.
"""

from __future__ import annotations

import json
import re
import runpy
from pathlib import Path

import pytest

pytest.importorskip("nbclient", reason="the test extra (nbclient, nbformat, ipykernel) runs the notebooks")
pytest.importorskip("ipykernel", reason="the test extra (nbclient, nbformat, ipykernel) runs the notebooks")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "examples" / "notebooks"
FIGURES = ROOT / "docs" / "figures"
PAGES = ROOT / "docs" / "notebooks"
MAKE = runpy.run_path(str(FIGURES / "make_figures.py"))
SHARED = ROOT / ".." / "shared" / "datasets"
EXPECTED = ("01_gamma_shapes.ipynb", "02_shuffle_bounds.ipynb", "03_total_budget.ipynb", "04_opacus_ensemble.ipynb")
PNG = b"\x89PNG\r\n\x1a\n"


def _embedded_figures() -> set[str]:
    """NAME of every ``figures/NAME.png`` a guide embeds."""
    return {m for page in (ROOT / "docs").glob("*.md")
            for m in re.findall(r"!\[[^\]]*\]\(figures/([\w-]+)\.png\)", page.read_text(encoding="utf-8"))}


def test_every_notebook_is_tested_documented_and_stored_without_outputs():
    assert tuple(sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))) == EXPECTED
    guide = (ROOT / "docs" / "examples.md").read_text(encoding="utf-8")
    for name in EXPECTED:
        assert f"examples/notebooks/{name}" in guide
        book = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
        code = [c for c in book["cells"] if c["cell_type"] == "code"]
        assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code), name


def _cells(book) -> list[tuple[str, str]]:
    return [(c["cell_type"], "".join(c["source"]) if isinstance(c["source"], list) else c["source"])
            for c in book["cells"]]


def _outputs(book) -> list[list[tuple[str, ...]]]:
    """Per code cell, each output's type and MIME types: what a page shows (no stderr), without the
    numbers (consecutive chunks of one stream are one output: the kernel splits them as timing has it)."""
    cells = []
    for c in book["cells"]:
        if c["cell_type"] == "code":
            kinds = [(o["output_type"], o.get("name", ""), *sorted(o.get("data", {})))
                     for o in MAKE["page_outputs"](c.get("outputs", []))]
            cells.append([k for i, k in enumerate(kinds) if i == 0 or k[0] != "stream" or k != kinds[i - 1]])
    return cells


def test_every_notebook_page_holds_its_notebooks_current_cells_executed():
    """A page (docs/notebooks/NAME.ipynb) out of date with its notebook fails here: rerun
    ``DARRM_DATA=../shared/datasets .venv/bin/python docs/figures/make_figures.py``."""
    assert tuple(sorted(p.name for p in PAGES.glob("*.ipynb"))) == EXPECTED
    for name in EXPECTED:
        source = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
        page = json.loads((PAGES / name).read_text(encoding="utf-8"))
        assert _cells(page) == _cells(source), f"{name}: docs/notebooks/ is stale; run docs/figures/make_figures.py"
        code = [c for c in page["cells"] if c["cell_type"] == "code"]
        assert all(c["execution_count"] is not None for c in code), name
        outputs = [o for c in code for o in c["outputs"]]
        assert not [o for o in outputs if o["output_type"] == "error"], name
        assert any("image/png" in o.get("data", {}) for o in outputs), name
        assert not [o for o in outputs if o.get("name") == "stderr"], f"{name}: a page shows the kernel's stderr"
        text = (PAGES / name).read_text(encoding="utf-8")
        assert str(ROOT.parent) not in text and "Running HiGHS" not in text, f"{name}: a local path or a banner"


def test_a_page_keeps_the_notebooks_output_without_stderr_or_the_solver_banner():
    outputs = [{"output_type": "stream", "name": "stderr", "text": "TqdmWarning: /home/me/.venv/...\n"},
               {"output_type": "stream", "name": "stdout",
                "text": "Running HiGHS 1.16.0 (git hash: f3f113d): Copyright\nIncludes third-party software "
                        "components, see THIRD_PARTY_NOTICES.md\ngamma_opt expected error 0.0413\n"},
               {"output_type": "stream", "name": "stdout", "text": "Running HiGHS 1.16.0 (git hash: 0)\n"},
               {"output_type": "error", "ename": "AssertionError", "evalue": "", "traceback": []}]
    shown = MAKE["page_outputs"](outputs)
    assert [o.get("name") or o["output_type"] for o in shown] == ["stdout", "error"]
    assert shown[0]["text"] == "gamma_opt expected error 0.0413\n"


def test_every_figure_a_guide_embeds_is_committed_and_drawn_by_a_tagged_notebook_cell():
    tagged = {t[len(MAKE["TAG"]):] for name in MAKE["DOC_NOTEBOOKS"]
              for c in json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
              for t in c.get("metadata", {}).get("tags", ()) if t.startswith(MAKE["TAG"])}
    embedded = _embedded_figures()
    assert embedded and embedded <= tagged
    assert all((FIGURES / f"{n}.png").read_bytes().startswith(PNG) for n in embedded)


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_executes_and_draws_its_figures(name, tmp_path):
    env = {}
    if name == "04_opacus_ensemble.ipynb":
        pytest.importorskip("opacus", reason="the Opacus notebook needs the experiments extra")
        if not (SHARED / "mnist" / "train-labels-idx1-ubyte.gz").is_file():
            pytest.skip("shared/datasets (MNIST) not present next to the repository")
        env["DARRM_DATA"] = str(SHARED.resolve())
    book = MAKE["execute"](NOTEBOOKS / name, env=env)   # raises CellExecutionError naming the cell
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.get("outputs", ())]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    pngs = MAKE["images"](book)
    assert pngs and all(p.startswith(PNG) and len(p) > 10_000 for p in pngs)
    page = json.loads((PAGES / name).read_text(encoding="utf-8"))
    assert _outputs(page) == _outputs(book), f"{name}: its page shows other outputs; run docs/figures/make_figures.py"
    if name in MAKE["DOC_NOTEBOOKS"]:   # the guides' figures regenerate from this run
        written = MAKE["write_figures"](book, tmp_path)
        assert written and all(p.read_bytes().startswith(PNG) for p in written)
        assert {p.stem for p in written} == set(MAKE["tagged_figures"](book))
