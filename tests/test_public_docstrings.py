"""Every public callable of the two facades, ``darrm`` and ``darrm.accounting``, and of the modules of
``darrm.experiments`` a user imports (:data:`EXPERIMENT_MODULES`), has a Google-style
docstring that the API reference (mkdocstrings, ``docstring_style: google``) renders as sections:

* a function: ``Args:`` naming every parameter it takes, ``Returns:`` unless it returns None,
  and ``Raises:``;
* a class: ``Args:`` or ``Attributes:`` naming every constructor parameter (enums and exceptions
  are documented by their members and their message);
* a public method of a facade's class (those the reference lists under the class): ``Args:``
  naming every parameter, ``Returns:`` unless it returns None, and ``Raises:`` when its own body
  raises.

The sections are parsed with griffe, the parser the docs build uses, so a section it would not
recognise (a wrong indent, a missing colon) fails here too.
"""

from __future__ import annotations

import ast
import enum
import importlib
import inspect
import textwrap

import pytest
from griffe import Docstring, DocstringSectionKind

import darrm
import darrm.accounting

FACADES = {"darrm": darrm, "darrm.accounting": darrm.accounting}
#: the modules of ``darrm.experiments`` a user script imports (docs/api/experiments.md) and those of
#: the PATE experiment (``darrm.experiments.pate``, every module with an ``__all__``): each public
#: callable defined there.
PATE_MODULES = tuple(f"darrm.experiments.pate.{name}" for name in (
    "anchors", "cli", "ensemble", "model", "multiclass_aggregators", "multiclass_config", "multiclass_report",
    "multiclass_run", "multiclass_teachers", "plurality_duel", "plurality_profile", "plurality_top_two", "public_split",
    "report", "run", "semi_supervised", "smooth_sensitivity", "student", "student_config", "student_report",
    "student_study", "study", "teacher_config", "teachers", "totals"))
EXPERIMENT_MODULES = ("darrm.experiments.data.idx", "darrm.experiments.data.loader", "darrm.experiments.data.locations",
                      "darrm.experiments.releases", "darrm.experiments.cache", "darrm.experiments.png", *PATE_MODULES)
FACADES.update({name: importlib.import_module(name) for name in EXPERIMENT_MODULES})
CASES = [(modname, name) for modname, mod in FACADES.items() for name in mod.__all__
         if callable(getattr(mod, name)) and not name.startswith("_")
         and (modname not in EXPERIMENT_MODULES or getattr(getattr(mod, name), "__module__", modname) == modname)]


def _sections(obj) -> dict[DocstringSectionKind, list]:
    doc = Docstring(inspect.getdoc(obj) or "", parser="google")
    return {s.kind: s.value for s in doc.parse(warnings=False)}


def _documented_names(section) -> set[str]:
    return {item.name.lstrip("*") for item in section}


def _parameters(obj) -> list[str]:
    try:
        sig = inspect.signature(obj)
    except ValueError:  # a dict subclass with no __init__ of its own (pate.run.Mechanisms) takes no named ones
        if inspect.isclass(obj) and obj.__init__ is dict.__init__:
            return []
        raise
    return [p.name for p in sig.parameters.values() if p.name not in ("self", "cls") and not p.name.startswith("_")
            and p.kind is not p.VAR_POSITIONAL]


@pytest.mark.parametrize("modname,name", CASES, ids=[f"{m}.{n}" for m, n in CASES])
def test_public_callable_has_google_sections_naming_every_parameter(modname, name):
    obj = getattr(FACADES[modname], name)
    if inspect.isclass(obj) and issubclass(obj, (enum.Enum, BaseException)):
        pytest.skip("enums and exceptions are documented by their members and messages")
    sections = _sections(obj)
    params = _parameters(obj)
    if inspect.isclass(obj):
        kinds = [k for k in (DocstringSectionKind.parameters, DocstringSectionKind.attributes) if k in sections]
        if params:
            assert kinds, f"{name}: no Args:/Attributes: section"
            documented = set().union(*(_documented_names(sections[k]) for k in kinds))
            assert set(params) <= documented, f"{name}: undocumented {sorted(set(params) - documented)}"
        return
    if params:
        assert DocstringSectionKind.parameters in sections, f"{name}: no Args: section"
        documented = _documented_names(sections[DocstringSectionKind.parameters])
        assert set(params) <= documented, f"{name}: undocumented {sorted(set(params) - documented)}"
    ret = inspect.signature(obj).return_annotation
    if ret not in (None, "None", inspect.Signature.empty):
        assert DocstringSectionKind.returns in sections, f"{name}: no Returns: section"
    assert DocstringSectionKind.raises in sections, f"{name}: no Raises: section"


def _methods() -> list[tuple[str, str, str]]:
    """(facade, class, method) for every public method defined by a class of ``darrm`` or
    ``darrm.accounting`` (properties are documented as attributes)."""
    out = []
    for modname in ("darrm", "darrm.accounting"):
        mod = FACADES[modname]
        for name in mod.__all__:
            cls = getattr(mod, name)
            if not inspect.isclass(cls) or issubclass(cls, (enum.Enum, BaseException)):
                continue
            out += [(modname, name, m) for m, member in vars(cls).items()
                    if not m.startswith("_") and not isinstance(member, property)
                    and callable(getattr(member, "__func__", member))]
    return out


METHODS = _methods()


def _raises_itself(func) -> bool:
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    return any(isinstance(node, ast.Raise) for node in ast.walk(tree))


def _method_gaps(func) -> list[str]:
    """The sections ``func``'s docstring lacks (empty: documented)."""
    sections, params, gaps = _sections(func), _parameters(func), []
    if params:
        documented = _documented_names(sections.get(DocstringSectionKind.parameters, []))
        if set(params) - documented:
            gaps.append(f"Args: {sorted(set(params) - documented)}")
    if inspect.signature(func).return_annotation not in (None, "None", inspect.Signature.empty) \
            and DocstringSectionKind.returns not in sections:
        gaps.append("Returns:")
    if _raises_itself(func) and DocstringSectionKind.raises not in sections:
        gaps.append("Raises:")
    return gaps


@pytest.mark.parametrize("modname,cls,method", METHODS, ids=[f"{m}.{c}.{n}" for m, c, n in METHODS])
def test_public_method_of_a_facade_class_has_google_sections(modname, cls, method):
    member = vars(getattr(FACADES[modname], cls))[method]
    gaps = _method_gaps(getattr(member, "__func__", member))
    assert not gaps, f"{modname}.{cls}.{method}: missing {gaps}"


def test_the_method_walk_covers_the_session_and_catches_a_missing_section():
    assert {"label", "epsilon_for", "save", "load"} <= {m for _, c, m in METHODS if c == "LabellingSession"}

    class Session:
        def label(self, votes: list, *, _private: int = 0) -> list:
            """Labels.

            Args:
                votes: the votes.
            """
            if not votes:
                raise ValueError("no votes")
            return votes

    assert _method_gaps(Session.label) == ["Returns:", "Raises:"]


def test_the_check_catches_a_prose_only_docstring():
    def prose(x: int) -> int:
        """Doubles ``x``."""
        return 2 * x

    assert _sections(prose) == {DocstringSectionKind.text: "Doubles ``x``."}
    assert _parameters(prose) == ["x"]


def test_every_pate_module_is_checked():
    """A new module of darrm.experiments.pate with an ``__all__`` must join :data:`PATE_MODULES`."""
    import pkgutil

    import darrm.experiments.pate as pate

    found = {f"darrm.experiments.pate.{m.name}" for m in pkgutil.iter_modules(pate.__path__)
             if hasattr(importlib.import_module(f"darrm.experiments.pate.{m.name}"), "__all__")}
    assert found == set(PATE_MODULES)
