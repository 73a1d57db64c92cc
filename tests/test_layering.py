"""Layering: experiments → accounting → darrm core, never back; inside the core, floors that only
import downward; no import cycles.

An AST walk over every module of the three packages, imports inside functions included
(that is where cycles used to hide).  Implicit imports of parent packages are not edges,
and ``TYPE_CHECKING`` blocks are skipped; every other ``import``/``from … import`` is.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"darrm": ROOT / "darrm", "darrm.accounting": ROOT / "accounting", "darrm.experiments": ROOT / "experiments"}


def _modules() -> dict[str, Path]:
    out = {}
    for name, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([name, *parts])] = path
    return out


MODULES = _modules()


def _layer(mod: str) -> str:
    for layer in ("darrm.experiments", "darrm.accounting"):
        if mod == layer or mod.startswith(layer + "."):
            return layer
    return "darrm"


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _imports(mod: str, path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    is_pkg = path.name == "__init__.py"
    package = mod if is_pkg else mod.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                if node.level > 1:
                    base = base[: -(node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                sub = f"{target}.{a.name}"
                found.add(sub if sub in MODULES else target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {m for m in found if m in MODULES}


GRAPH = {mod: _imports(mod, path) for mod, path in MODULES.items()}
RANK = {"darrm": 0, "darrm.accounting": 1, "darrm.experiments": 2}


def test_layers_only_import_downward():
    bad = [(m, t) for m, ts in GRAPH.items() for t in ts if RANK[_layer(t)] > RANK[_layer(m)]]
    assert not bad, f"upward imports (experiments → accounting → darrm only): {bad}"


#: the core's floors, lowest first: a module may import its own floor and the floors below it.
#: A module belongs to the floor of its longest matching prefix.  ``privacy.condition`` (the rigorous
#: float64 test of Lemma 3.4) and ``privacy.corners`` (the corners of Lemma 5.1) are arithmetic on
#: numbers, with no model type: they sit with the numerics, below the parameters that use them; the
#: rest of ``privacy`` (certificates, sweeps) works on the model's types and sits above it.
#: ``disjoint`` builds its O(K) constraint generation on the solver's LP tools (restricted LP,
#: finalisation), so it sits above ``solver``; ``solver`` never names disjoint members.
CORE_FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundation", ("darrm.errors", "darrm.validation", "darrm.logs", "darrm.atomic", "darrm.locking",
                    "darrm.paths", "darrm._version", "darrm._lazy", "darrm.secure_random", "darrm.neighboring",
                    "darrm.plotting", "darrm.strict_json")),
    ("numerics", ("darrm.numerics", "darrm.backends", "darrm.privacy.condition", "darrm.privacy.corners")),
    # the members' privacy models (darrm.models.disjoint.members) are parameters' vocabulary, as the parameters are;
    # the report is text and plots of γ tables
    ("model", ("darrm.params", "darrm.gamma", "darrm.mechanism", "darrm.prior", "darrm.table", "darrm.status",
               "darrm.member_params", "darrm.families", "darrm.utility", "darrm.models.disjoint.members",
               "darrm.report")),
    ("privacy", ("darrm.privacy",)),
    ("solver", ("darrm.solver",)),
    # darrm.models: the member models, above the solver whose LP tools they build on.  Inside it, lowest
    # first: the one interface (base) and the shared-data model; disjoint shards and grouped budgets beside
    # each other, never importing each other; then the models built on those; the registry on top.
    ("models", ("darrm.models.base", "darrm.models.shared", "darrm.models.group_lists")),
    ("disjoint", ("darrm.models.disjoint", "darrm.models.groups")),
    # record groups on shards, and budget groups on one-group shards: the disjoint members' regions and
    # constraint-generation loop, per group (budget groups also read per-group tables as darrm.models.groups does)
    ("shard_groups", ("darrm.models.shard_groups", "darrm.models.weighted_shards")),
    # the registry of every member model, and what asks it for any model (the privacy profile)
    ("registry", ("darrm.models",)),
    # budget: γ for a total budget, designed with the solver's LPs and certified by the profile
    ("budget", ("darrm.budget",)),
    # profile_reference: the high-precision brute force of every member model's privacy profile
    # (an independent check for tests), so it sits where both models are known
    ("api", ("darrm.api", "references.profile_reference")),
    ("front", ("darrm.verification", "darrm.gamma_file", "darrm.json_vocabulary",
               "darrm.cli_conventions")),
    ("entry", ("darrm.cli", "darrm")),
)


def _floor(mod: str) -> int:
    """The rank of ``mod``'s floor (longest matching prefix; the facade "darrm" matches only
    itself); KeyError for a module in no floor."""
    best = (-1, -1)
    for rank, (_, prefixes) in enumerate(CORE_FLOORS):
        for pre in prefixes:
            inside = mod == pre or (pre != "darrm" and mod.startswith(pre + "."))
            if inside and len(pre) > best[0]:
                best = (len(pre), rank)
    if best[1] < 0:
        raise KeyError(mod)
    return best[1]


CORE = sorted(m for m in MODULES if _layer(m) == "darrm")


def test_every_core_module_has_a_floor():
    missing = []
    for m in CORE:
        try:
            _floor(m)
        except KeyError:
            missing.append(m)
    assert not missing, f"give these modules a floor in CORE_FLOORS: {missing}"


def test_the_core_floors_only_import_downward():
    """api → disjoint → solver → privacy → model → numerics/backends → foundation: 0 upward imports."""
    bad = [(m, t) for m in CORE for t in GRAPH[m] if _layer(t) == "darrm" and _floor(t) > _floor(m)]
    assert not bad, "upward imports in the core (module → target): " + ", ".join(f"{m} → {t}" for m, t in bad)


def test_solver_never_names_a_member_model():
    """The LP engine knows no member model: the models build on it, and the registry chooses between them."""
    bad = [(m, t) for m in CORE if m.startswith("darrm.solver") for t in GRAPH[m] if t.startswith("darrm.models")]
    assert not bad, bad


def test_the_floor_check_catches_an_upward_import():
    """The checker itself: a made-up edge model → solver must be reported."""
    assert _floor("darrm.solver.gamma_opt") > _floor("darrm.table")
    assert _floor("darrm.privacy.condition") < _floor("darrm.params") < _floor("darrm.privacy.certify")
    with pytest.raises(KeyError):
        _floor("darrm.a_module_nobody_placed")


def test_the_core_never_imports_its_own_facade():
    """Modules inside darrm import each other directly; only the CLI and the upper layers use the facade."""
    bad = [m for m, ts in GRAPH.items() if _layer(m) == "darrm" and m not in ("darrm", "darrm.cli") and "darrm" in ts]
    assert not bad, bad


def test_no_import_cycles():
    """Tarjan's strongly connected components over the module graph (facades excluded as
    targets: importing a package's __init__ from inside it is what the previous test forbids)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in GRAPH[v]:
            if w == v:
                continue
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in GRAPH:
        if v not in index:
            strong(v)
    assert not cycles, f"import cycles: {cycles}"


def test_the_walk_sees_every_module_and_finds_known_edges():
    """The checker itself: it must see function-local imports and relative imports."""
    assert len(MODULES) > 40
    assert "darrm.privacy.sweep" in GRAPH["darrm.privacy.certify"]
    assert "darrm.privacy.condition" in GRAPH["darrm.params"]


def test_member_models_never_import_the_api_or_the_command_line():
    """A model is one class on darrm.models.base: it is asked by darrm.api and the CLI, never asks them
    (its CLI hook takes values, not argparse)."""
    bad = [(m, t) for m in CORE if m.startswith("darrm.models") for t in GRAPH[m]
           if t in ("darrm.api", "darrm.cli", "darrm.cli_conventions")]
    assert not bad, bad
