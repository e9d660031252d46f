"""The house's rooms: every module of fampnb (private ones included) imports only the rooms its room
may import, other packages reach a package through its face, the model never imports matplotlib,
ipywidgets, plots or widgets, and there is no runtime import cycle (imports deferred into functions
count; ``if TYPE_CHECKING:`` imports do not run and only count for the direction).

The table of rooms and what each may import is written once, in docs/DESIGN.md ("Rooms and
imports"); this test reads it from there.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from conftest import ROOT

PKG = ROOT / "fampnb"

#: packages whose modules other rooms may not import directly: they import the face
FACES = ("formats", "scaler", "probe", "logs", "diagnose")
#: third-party modules the model rooms never import (not even inside a function)
VIEW_LIBS = ("matplotlib", "ipywidgets", "IPython", "ipympl")
VIEW_ROOMS = ("plots", "widgets")


@dataclass(frozen=True)
class Edge:
    source: str       #: importing module, dotted
    target: str       #: imported fampnb module (a submodule when one is named), dotted
    line: int
    runtime: bool     #: False inside ``if TYPE_CHECKING:``
    deferred: bool    #: inside a function


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _is_package(name: str) -> bool:
    return modules()[name].name == "__init__.py"


def _resolve(source: str, level: int, module: str | None) -> str:
    """The absolute name of ``from <level dots><module> import ...`` written in ``source``."""
    if level == 0:
        return module or ""
    base = source.split(".")
    if not _is_package(source):
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _typing_only(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _walk(node: ast.AST, runtime: bool = True, deferred: bool = False):
    """(import node, runtime, deferred) for every import statement below ``node``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, runtime, deferred
        elif isinstance(child, ast.If) and _typing_only(child):
            for sub in child.body:
                yield from _walk(ast.Module(body=[sub], type_ignores=[]), False, deferred)
            for sub in child.orelse:
                yield from _walk(ast.Module(body=[sub], type_ignores=[]), runtime, deferred)
        else:
            inner = deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            yield from _walk(child, runtime, inner)


@cache
def imports(source: str) -> tuple[list[Edge], list[tuple[str, int, bool]]]:
    """The fampnb edges of ``source``, and its other imports as (top-level name, line, deferred)."""
    tree = ast.parse(modules()[source].read_text(), str(modules()[source]))
    edges, third = [], []
    for node, runtime, deferred in _walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            base = _resolve(source, node.level, node.module)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules() else base
                       for a in node.names]
        for t in targets:
            if t == "fampnb" or t.startswith("fampnb."):
                while t not in modules():  # ``import fampnb.a.b`` names a module; trim attributes
                    t = t.rsplit(".", 1)[0]
                edges.append(Edge(source, t, node.lineno, runtime, deferred))
            elif not (isinstance(node, ast.ImportFrom) and node.level):
                third.append((t.split(".")[0], node.lineno, deferred))
    return edges, third


def room(name: str) -> str:
    """The room of a module: its top package or module under fampnb (``fampnb`` itself: __init__)."""
    parts = name.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1]


@cache
def allowed() -> dict[str, set[str]]:
    """The table "Rooms and imports" of docs/DESIGN.md: room -> rooms it may import."""
    text = (ROOT / "docs" / "DESIGN.md").read_text()
    m = re.search(r"^## Rooms and imports\n.*?^```\n(.*?)^```", text, re.M | re.S)
    assert m, "docs/DESIGN.md has no fenced table under '## Rooms and imports'"
    table: dict[str, set[str]] = {}
    for line in m.group(1).splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, _, rest = line.partition(":")
        may = rest.split("#", 1)[0].replace(",", " ").split()
        table[name.strip()] = set() if may == ["-"] else set(may)
    return table


def all_edges() -> list[Edge]:
    return [e for m in modules() for e in imports(m)[0]]


def test_every_module_is_in_a_room_of_the_table():
    table = allowed()
    missing = sorted({room(m) for m in modules()} - set(table))
    assert not missing, f"rooms missing from DESIGN.md's table: {missing}"
    unknown = sorted({r for may in table.values() for r in may} - set(table))
    assert not unknown, f"the table names rooms that do not exist: {unknown}"
    assert len(modules()) > 40 and "fampnb._checks" in modules()


def test_imports_run_one_way():
    table = allowed()
    bad = [f"{e.source}:{e.line} imports {e.target} ({room(e.source)} may import "
           f"{', '.join(sorted(table[room(e.source)])) or 'nothing'})"
           for e in all_edges()
           if room(e.target) != room(e.source) and room(e.target) not in table[room(e.source)]]
    assert not bad, "\n".join(bad)


def _internal(target: str) -> bool:
    """A module inside a package that other rooms may not import: any module of a package with
    a face, a private module of any package (top-level ``_checks``, ``_lazy`` are rooms)."""
    parts = target.split(".")
    return len(parts) > 2 and (room(target) in FACES or parts[-1].startswith("_"))


def test_other_rooms_import_a_package_through_its_face():
    bad = [f"{e.source}:{e.line} imports {e.target}: import fampnb.{room(e.target)} instead"
           for e in all_edges() if room(e.target) != room(e.source) and _internal(e.target)]
    assert not bad, "\n".join(bad)
    assert _internal("fampnb.scaler.loops") and _internal("fampnb.plots._x")
    assert not _internal("fampnb.scaler") and not _internal("fampnb.plots.scale")


def test_the_model_never_imports_the_view():
    bad = []
    for m in modules():
        if room(m) in VIEW_ROOMS:
            continue
        edges, third = imports(m)
        bad += [f"{m}:{line} imports {lib}" for lib, line, _ in third if lib in VIEW_LIBS]
        bad += [f"{m}:{e.line} imports {e.target}" for e in edges if room(e.target) in VIEW_ROOMS]
    assert not bad, "\n".join(bad)


def _cycles(edges: list[Edge]) -> list[list[str]]:
    graph: dict[str, set[str]] = {}
    for e in edges:
        if e.runtime and e.source != e.target:
            graph.setdefault(e.source, set()).add(e.target)
    # Tarjan's strongly connected components: a component of two or more modules is a cycle
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
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
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_runtime_import_cycles():
    assert _cycles(all_edges()) == []


def test_the_cycle_check_sees_deferred_imports():
    """The check is not blind: a cycle closed by an import inside a function is found, a
    TYPE_CHECKING import is not a cycle."""
    a = Edge("fampnb.a", "fampnb.b", 1, True, False)
    assert _cycles([a, Edge("fampnb.b", "fampnb.a", 9, True, True)]) == [["fampnb.a", "fampnb.b"]]
    assert _cycles([a, Edge("fampnb.b", "fampnb.a", 3, False, False)]) == []


def test_the_face_rule_and_the_table_are_not_vacuous():
    edges = all_edges()
    assert any(e.deferred for e in edges)
    assert any(e.source == "fampnb.widgets.decay" and e.target == "fampnb.scenarios" for e in edges)
    assert any(not e.runtime for e in edges)
    table = allowed()
    assert "widgets" not in table["plots"] and "plots" not in table["formats"]
