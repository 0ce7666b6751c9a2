"""The house keeps its floors: every import statement of the package (function-level ones included, `TYPE_CHECKING`
blocks aside), each module mapped to its room (a folder under `pipeline/`, a module at its root, `connectors/`), makes
an acyclic graph of rooms and of modules, in which nothing outside the lab wing (`fairstream.lab`) imports it; and no
module is over 500 lines, no class over 300, no folder over 15 modules. Read from the source with `ast`, so a new upward import fails here, named by file and line."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
FOLDERS = {"fairstream": ROOT / "pipeline", "fairstream.connectors": ROOT / "connectors"}


def modules() -> dict[str, Path]:
    """Every module of the package by its import name (the root façade, `fairstream/__init__.py`, aside)."""
    found = {}
    for package, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if package == "fairstream" and not parts:
                continue
            found[".".join([package, *parts])] = path
    return found


MODULES = modules()


def room(module: str) -> str:
    """A folder under `pipeline/` (`trials`), a module at its root (`runner`), or `connectors`."""
    parts = module.split(".")
    return "connectors" if parts[1] == "connectors" else parts[1]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(module: str, path: Path) -> list[tuple[str, int]]:
    """The package's modules `module` imports, with the line of each import."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: list[tuple[str, int]] = []

    def resolve(name: str) -> str | None:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        return name or None

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((target, node.lineno) for alias in node.names if (target := resolve(alias.name)))
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) + (f".{node.module}" if node.module else "") if node.level else node.module or ""
            for alias in node.names:
                target = resolve(f"{base}.{alias.name}") if f"{base}.{alias.name}" in MODULES else resolve(base)
                if target:
                    found.append((target, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return [(target, line) for target, line in found if target != module and target.startswith("fairstream.")]


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the graph, as the nodes along it, or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := walk(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := walk(node)):
            return found
    return None


EDGES = [(module, target, line) for module, path in MODULES.items() for target, line in imports(module, path)]


def test_the_rooms_form_floors():
    graph: dict[str, set[str]] = defaultdict(set)
    where: dict[tuple[str, str], str] = {}
    for module, target, line in EDGES:
        if room(module) != room(target):
            graph[room(module)].add(room(target))
            where.setdefault((room(module), room(target)), f"{MODULES[module].relative_to(ROOT)}:{line}")
    found = cycle(graph)
    assert found is None, "rooms import each other in a circle: " + ", ".join(f"{a} → {b} ({where[a, b]})" for a, b in zip(found, found[1:]))


def test_the_product_never_imports_the_lab():
    found = [f"{MODULES[module].relative_to(ROOT)}:{line} imports {target}" for module, target, line in EDGES if room(target) == "lab" != room(module)]
    assert found == [], "the product imports the lab wing: " + "; ".join(found)


def test_no_module_imports_itself_round_a_circle():
    graph: dict[str, set[str]] = defaultdict(set)
    for module, target, _line in EDGES:
        graph[module].add(target)
    found = cycle(graph)
    assert found is None, "modules import each other in a circle: " + " → ".join(found)


def test_a_cycle_is_found_where_there_is_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"] and cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("folder", sorted({path.parent for path in MODULES.values()}), ids=lambda folder: str(folder.relative_to(ROOT)))
def test_rooms_stay_small(folder):
    assert len(list(folder.glob("*.py"))) <= 15, f"{folder.relative_to(ROOT)} holds more than 15 modules"
    for path in folder.glob("*.py"):
        source = path.read_text()
        assert len(source.splitlines()) <= 500, f"{path.relative_to(ROOT)} is over 500 lines"
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno - node.lineno < 300, f"{path.relative_to(ROOT)}: class {node.name} is over 300 lines"


def floors() -> dict[str, int]:
    """Each room's floor: one above the highest room it imports, the rooms that import none on floor 0."""
    graph: dict[str, set[str]] = defaultdict(set)
    for module, target, _line in EDGES:
        if room(module) != room(target):
            graph[room(module)].add(room(target))
    found: dict[str, int] = {}

    def floor(name: str) -> int:
        if name not in found:
            found[name] = 1 + max((floor(below) for below in graph[name]), default=-1)
        return found[name]

    return {name: floor(name) for name in {room(module) for module in MODULES}}


def test_the_architecture_page_shows_the_floors_as_they_are():
    page = (ROOT / "docs" / "architecture.md").read_text()
    shown = {name: int(number) for number, names in re.findall(r"^\| (\d+) \| (.+) \|$", page, re.M) for name in re.findall(r"`([a-z_]+)`", names)}
    assert shown == floors()
