"""Layering: experiments → accounting → darrm core, never back; no import cycles.

An AST walk over every module of the three packages, imports inside functions included
(that is where cycles used to hide).  Implicit imports of parent packages are not edges,
and ``TYPE_CHECKING`` blocks are skipped; every other ``import``/``from … import`` is.
"""

from __future__ import annotations

import ast
from pathlib import Path

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
