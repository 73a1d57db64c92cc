"""The documentation site builds with warnings as errors, and documents every public name (issue #16).

``mkdocs build --strict`` (mkdocs.yml at the repository root) into a temporary folder: a broken
link, a missing page, a docstring griffe cannot parse or an object mkdocstrings cannot find fails
the build.  The `docs` extra (part of `all`) brings the tools; without them the test is skipped,
saying so.  The build needs no network.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import darrm
import darrm.accounting

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ("examples", "solving", "disjoint", "groups", "accounting", "shuffle", "experiments", "simulations")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    for module in ("mkdocs", "mkdocstrings", "mkdocstrings_handlers.python", "material"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # mkdocs-material's banner about its successor
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
                        "--site-dir", str(out)], cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


def test_the_site_has_the_home_page_the_tutorial_and_every_guide(site):
    for page in ("index.html", "tutorial/index.html", *(f"{g}/index.html" for g in GUIDES)):
        assert (site / page).is_file(), page
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "private majority ensembling" in home and "Lemma 5.1" in home  # README's intro and paper map


@pytest.mark.parametrize("module,page", [(darrm, "api/darrm/index.html"),
                                         (darrm.accounting, "api/accounting/index.html")],
                         ids=["darrm", "darrm.accounting"])
def test_every_public_name_of_the_facades_is_documented(site, module, page):
    """mkdocstrings renders a member only when it has a docstring: an anchor means a documented name."""
    ids = set(re.findall(r'id="([^"]+)"', (site / page).read_text(encoding="utf-8")))
    missing = [name for name in module.__all__ if f"{module.__name__}.{name}" not in ids]
    assert not missing, f"{module.__name__}: no documentation for {missing}"


@pytest.mark.parametrize("modname,page", [("darrm.models.disjoint", "api/disjoint/index.html"),
                                          ("darrm.models.groups", "api/groups/index.html"),
                                          ("darrm.models.shard_groups", "api/shard_groups/index.html"),
                                          ("darrm.models.weighted_shards", "api/weighted_shards/index.html"),
                                          ("darrm.accounting.shuffle", "api/shuffle/index.html"),
                                          ("darrm.experiments.data.loader", "api/experiments/index.html"),
                                          ("darrm.experiments.releases", "api/experiments/index.html")])
def test_every_public_callable_of_the_sub_packages_a_user_imports_is_documented(site, modname, page):
    """The reference covers the sub-packages too (their callables; constants need no page)."""
    module = importlib.import_module(modname)
    ids = set(re.findall(r'id="([^"]+)"', (site / page).read_text(encoding="utf-8")))
    public = [n for n in module.__all__ if callable(getattr(module, n))]
    missing = [n for n in public if f"{modname}.{n}" not in ids]
    assert public and not missing, f"{modname}: no documentation for {missing}"
    assert not [i for i in ids if re.search(r"\._[^_]", i)], "a private name is in the reference"


def test_the_guides_formulas_are_typeset_by_mathjax_loaded_at_view_time(site):
    """arithmatex marks the formulas; the pages load the MathJax settings (built into the site) and
    MathJax itself from a CDN only in the reader's browser, so the build needs no network."""
    for page in ("tutorial", "solving", "accounting"):
        html = (site / page / "index.html").read_text(encoding="utf-8")
        assert '<div class="arithmatex">\\[' in html, page
        assert "javascripts/mathjax.js" in html and "mathjax@3/es5/tex-mml-chtml.js" in html, page
    assert "processHtmlClass" in (site / "javascripts" / "mathjax.js").read_text(encoding="utf-8")


def test_the_reference_shows_no_raw_sphinx_role(site):
    """Roles in docstrings (``:func:`solve```) render as links or code (docs/hooks/sphinx_roles.py)."""
    raw = re.compile(r":(func|class|mod|meth|attr|data|exc|obj):")
    hits = {str(p.relative_to(site)): len(raw.findall(p.read_text(encoding="utf-8")))
            for p in site.rglob("*.html")}
    assert not {k: v for k, v in hits.items() if v}, hits
    reference = (site / "api" / "darrm" / "index.html").read_text(encoding="utf-8")
    assert 'href="#darrm.GammaTable"' in reference  # a role became a working link


def test_the_role_converter_links_only_to_documented_objects():
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        from sphinx_roles import convert
    finally:
        sys.path.pop(0)
    out = convert("A :class:`~darrm.GammaTable` from :func:`solve`; :func:`darrm.privacy.certify.certify`; "
                  ":mod:`darrm.families`", "darrm.api.solve")
    assert out == ("A [`GammaTable`][darrm.GammaTable] from [`solve`][darrm.solve]; "
                   "`darrm.privacy.certify.certify`; `darrm.families`")
